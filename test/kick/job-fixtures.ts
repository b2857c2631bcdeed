/** Jobs in the states the schedule tests need, made through the job API. */
import { as, serviceRole, type Caller, type Sql } from '../helpers/db.ts';

export async function enqueueFor(
	sql: Sql,
	user: Caller & { sub: string },
	kind: string,
	jobTable = 'jobs',
): Promise<string> {
	const [job] = await as(
		sql,
		serviceRole,
		(tx) => tx`select id from job_enqueue(${kind}, owner_id => ${user.sub}::uuid, job_table => ${jobTable})`,
	);
	return job!.id as string;
}

/** A running job whose worker has been silent for `silentFor` (a Postgres interval). */
export async function runningJob(
	sql: Sql,
	user: Caller & { sub: string },
	kind: string,
	silentFor: string,
	jobTable = 'jobs',
	heartbeatMs: number | null = null,
): Promise<string> {
	const id = await enqueueFor(sql, user, kind, jobTable);
	await as(
		sql,
		serviceRole,
		(tx) => tx`select job_claim(${id}::uuid, job_table => ${jobTable}, heartbeat_ms => ${heartbeatMs})`,
	);
	await sql.unsafe(
		`update ${jobTable === 'jobs' ? 'public.jobs' : jobTable} set heartbeat_at = now() - $1::interval where id = $2`,
		[silentFor, id],
	);
	return id;
}

/** A queued job that has been claimable for `waitedFor` (a Postgres interval). */
export async function waitingJob(
	sql: Sql,
	user: Caller & { sub: string },
	kind: string,
	waitedFor: string,
	jobTable = 'jobs',
): Promise<string> {
	const id = await enqueueFor(sql, user, kind, jobTable);
	await sql.unsafe(
		`update ${jobTable === 'jobs' ? 'public.jobs' : jobTable} set available_at = now() - $1::interval where id = $2`,
		[waitedFor, id],
	);
	return id;
}
