/**
 * The state machine is enforced by the database for every caller, whatever SQL it
 * sends — even the service role and the table owner — and the TypeScript mirror
 * matches the SQL one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { JOB_STATUSES, JOB_TRANSITIONS, TERMINAL_JOB_STATUSES, canTransition } from '../../src/lib/state.ts';
import type postgres from 'postgres';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

async function jobIn(status: string): Promise<string> {
	const [{ id }] = await db.sql`insert into jobs (kind, payload) values ('sm', '\\x01') returning id`;
	if (status === 'queued') return id;
	await db.sql`update jobs set status = 'running', attempts = 1 where id = ${id}`;
	if (status === 'running') return id;
	await db.sql`update jobs set status = ${status}, error = 'because' where id = ${id}`;
	return id;
}

async function code(p: Promise<unknown>): Promise<string | null> {
	try {
		await p;
		return null;
	} catch (e) {
		return (e as { code: string }).code;
	}
}

describe('the state machine, written once in SQL', () => {
	it('the TypeScript mirror lists exactly the SQL enum and transitions', async () => {
		const enumRows = await db.sql`select unnest(enum_range(null::job_status))::text as s`;
		expect(enumRows.map((r) => r.s)).toEqual([...JOB_STATUSES]);
		const rows = await db.sql`select from_status::text as f, to_status::text as t from supabase_jobs.transitions`;
		const sqlPairs = rows.map((r) => `${r.f}->${r.t}`).sort();
		const tsPairs = Object.entries(JOB_TRANSITIONS)
			.flatMap(([f, tos]) => (tos as readonly string[]).map((t) => `${f}->${t}`))
			.sort();
		expect(sqlPairs).toEqual(tsPairs);
		const terminal =
			await db.sql`select s::text from unnest(enum_range(null::job_status)) s where supabase_jobs.is_terminal(s)`;
		expect(terminal.map((r) => r.s)).toEqual([...TERMINAL_JOB_STATUSES]);
	});

	for (const from of JOB_STATUSES) {
		for (const to of JOB_STATUSES) {
			if (from === to) continue;
			const legal = canTransition(from, to);
			it(`${from} -> ${to} by raw SQL as the table owner is ${legal ? 'allowed' : 'refused (SJ001)'}`, async () => {
				const id = await jobIn(from);
				const extra = to === 'failed' ? db.sql`, error = 'x'` : db.sql``;
				const result = await code(db.sql`update jobs set status = ${to} ${extra} where id = ${id}`);
				expect(result).toBe(legal ? null : 'SJ001');
				const [row] = await db.sql`select status from jobs where id = ${id}`;
				expect(row!.status).toBe(legal ? to : from);
			});
		}
	}

	it('done -> running is refused even for service_role', async () => {
		const id = await jobIn('done');
		expect(await code(as(db.sql, serviceRole, (tx) => tx`update jobs set status = 'running' where id = ${id}`))).toBe(
			'SJ001',
		);
	});

	it('a terminal row is frozen: only is_active may change', async () => {
		const id = await jobIn('failed');
		expect(await code(db.sql`update jobs set error = 'rewritten' where id = ${id}`)).toBe('SJ001');
		expect(await code(db.sql`update jobs set result_id = gen_random_uuid() where id = ${id}`)).toBe('SJ001');
		expect(await code(db.sql`update jobs set is_active = false where id = ${id}`)).toBeNull();
	});

	it('a job starts queued: inserting a running or finished row is refused', async () => {
		expect(await code(db.sql`insert into jobs (kind, status) values ('sm', 'running')`)).toBe('SJ001');
		expect(await code(db.sql`insert into jobs (kind, status, finished_at) values ('sm', 'done', now())`)).toBe('SJ001');
	});

	it('the named checks hold: a terminal row never keeps its payload, finished_at iff terminal', async () => {
		const id = await jobIn('running');
		await db.sql`update jobs set status = 'done' where id = ${id}`;
		const [row] = await db.sql`select payload, finished_at, progress from jobs where id = ${id}`;
		expect(row!.payload).toBeNull();
		expect(row!.finished_at).toBeInstanceOf(Date);
		expect(row!.progress).toBe(100);
		expect(await code(db.sql`update jobs set payload = '\\x00' where id = ${id}`)).toBe('SJ001');
	});

	it('the row rules hold for every update, each refused under its name as a CHECK would be', async () => {
		const id = await jobIn('running');
		const broken = async (set: string) => {
			const error = await db.sql.unsafe(`update jobs set ${set} where id = $1`, [id]).then(
				() => null,
				(e: { code?: string; constraint_name?: string }) => e,
			);
			return error && { code: error.code, constraint: error.constraint_name };
		};
		expect(await broken(`progress = 101`)).toEqual({ code: '23514', constraint: 'job_progress_percent' });
		expect(await broken(`finished_at = now()`)).toEqual({ code: '23514', constraint: 'job_finished_at_iff_terminal' });
		expect(await broken(`started_at = null`)).toEqual({ code: '23514', constraint: 'job_running_has_started_at' });
		expect(await broken(`status = 'failed', error = null`)).toEqual({
			code: '23514',
			constraint: 'job_failed_has_error',
		});
		expect(await broken(`attempts = max_attempts + 1`)).toEqual({
			code: '23514',
			constraint: 'job_attempts_within_max',
		});
		expect(await broken(`stage = repeat('x', 201)`)).toEqual({ code: '23514', constraint: 'job_stage_length' });
		// As service_role too, and nothing changed.
		expect(await code(as(db.sql, serviceRole, (tx) => tx`update jobs set progress = -1 where id = ${id}`))).toBe(
			'23514',
		);
		const [row] = await db.sql`select status, progress, stage, attempts from jobs where id = ${id}`;
		expect(row).toEqual({ status: 'running', progress: 0, stage: null, attempts: 1 });
		expect(await broken(`progress = 100`)).toBeNull();
	});

	it('the row rules hold for every insert: the whole statement is refused, naming the rule', async () => {
		const before = await db.sql`select count(*)::int as n from jobs`;
		const refused = await db.sql`insert into jobs (kind) values ('ok'), ('not a kind!')`.then(
			() => null,
			(e: { code?: string; constraint_name?: string }) => ({ code: e.code, constraint: e.constraint_name }),
		);
		expect(refused).toEqual({ code: '23514', constraint: 'job_kind_format' });
		const tags = await db.sql`insert into jobs (kind, tags) values ('ok', array['a', null])`.then(
			() => null,
			(e: { code?: string; constraint_name?: string }) => ({ code: e.code, constraint: e.constraint_name }),
		);
		expect(tags).toEqual({ code: '23514', constraint: 'job_tags_shape' });
		expect(await db.sql`select count(*)::int as n from jobs`).toEqual(before);
	});

	it('a job queued again for a retry keeps how far its last attempt got; the next claim starts from 0', async () => {
		const id = await jobIn('running');
		await db.sql`update jobs set progress = 40 where id = ${id}`;
		await db.sql`update jobs set status = 'queued' where id = ${id}`;
		expect((await db.sql`select status::text, attempts, progress from jobs where id = ${id}`)[0]).toEqual({
			status: 'queued',
			attempts: 1,
			progress: 40,
		});
		await db.sql`update jobs set status = 'running', attempts = 2 where id = ${id}`;
		expect((await db.sql`select progress from jobs where id = ${id}`)[0]).toEqual({ progress: 0 });
	});

	it('a queued row takes no progress or result from a worker that did not claim it', async () => {
		const id = await jobIn('queued');
		expect(await code(db.sql`update jobs set progress = 50 where id = ${id}`)).toBe('SJ001');
	});
});

describe('the guard decides by privilege, not by role name', () => {
	it('a custom role inheriting authenticated is a user: it cannot claim or complete its own job', async () => {
		await db.sql`create role app_member nologin inherit`;
		await db.sql`grant authenticated to app_member`;
		const [{ id: sub }] =
			await db.sql`insert into auth.users (id, email) values (gen_random_uuid(), 'm@example.test') returning id`;
		const member = async <T>(fn: (tx: import('postgres').TransactionSql) => Promise<T>) =>
			(await db.sql.begin(async (tx) => {
				await tx`select set_config('role', 'app_member', true), set_config('request.jwt.claims', ${JSON.stringify({ sub, role: 'authenticated' })}, true)`;
				return await fn(tx);
			})) as T;
		const [{ id }] = await member((tx) => tx`select id from job_enqueue('member.work')`);
		expect(await code(member((tx) => tx`update jobs set status = 'running' where id = ${id}`))).toBe('42501');
		await db.sql`update jobs set status = 'running', attempts = 1 where id = ${id}`;
		expect(await code(member((tx) => tx`update jobs set status = 'done' where id = ${id}`))).toBe('42501');
		const [row] = await db.sql`select status, progress from jobs where id = ${id}`;
		expect(row).toMatchObject({ status: 'running', progress: 0 });
	});
});

describe('the guard as the backstop of the job_* functions', () => {
	/** The mark a job_* function sets for its own statement (see guard_job_update's WHEN). */
	const forgeMark = (tx: postgres.TransactionSql) =>
		tx`select set_config('supabase_jobs.handled', concat(statement_timestamp(), ' ', pg_trigger_depth(), ' sent'), true)`;

	it('a direct UPDATE as the table owner that breaks a transition is refused right after a job_* function in the same transaction', async () => {
		const claimed = await jobIn('queued');
		const other = await jobIn('queued');
		const result = await code(
			db.sql.begin(async (tx) => {
				const [row] = await tx`select (c).attempts from job_claim(${claimed}) c`;
				expect(row!.attempts).toBe(1);
				await tx`select job_succeed(${claimed}, attempt => 1)`;
				await tx`update jobs set status = 'done' where id = ${other}`;
			}),
		);
		expect(result).toBe('SJ001');
		const rows = await db.sql`select id, status from jobs where id in (${claimed}, ${other})`;
		expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({ [claimed]: 'queued', [other]: 'queued' });
	});

	it('the mark of a later statement does not carry over: an illegal UPDATE in the next statement is refused', async () => {
		const id = await jobIn('queued');
		const result = await code(
			db.sql.begin(async (tx) => {
				await forgeMark(tx);
				await tx`update jobs set status = 'done' where id = ${id}`;
			}),
		);
		expect(result).toBe('SJ001');
	});

	it("a user who sets the mark still gets the guard: their job's status cannot be moved but to cancelled", async () => {
		const user = await createUser(db.sql);
		const [{ id }] = await as(
			db.sql,
			user,
			(tx) => tx`select (j).id from job_enqueue(kind => 'sm', params => '{}'::jsonb) j`,
		);
		const result = await code(
			as(db.sql, user, async (tx) => {
				await tx`update jobs set status = 'done' where id = ${id} and set_config('supabase_jobs.handled', concat(statement_timestamp(), ' ', pg_trigger_depth(), ' sent'), true) is not null`;
			}),
		);
		expect(result).toBe('42501');
		const [row] = await db.sql`select status from jobs where id = ${id}`;
		expect(row!.status).toBe('queued');
	});

	it('a claim and a success through the functions leave the row as the guard leaves it for a direct write', async () => {
		const byFunction = await jobIn('queued');
		const byUpdate = await jobIn('queued');
		await db.sql`select job_claim(${byFunction})`;
		await db.sql`update jobs set status = 'running', attempts = 1 where id = ${byUpdate}`;
		const shape = async (id: string) => {
			const [r] =
				await db.sql`select status, attempts, progress, stage, payload is null as no_payload, started_at is not null as started,
				heartbeat_at is not null as beating, finished_at is null as unfinished, error, error_code, expected_end_at,
				updated_at > created_at as touched from jobs where id = ${id}`;
			return r;
		};
		expect(await shape(byFunction)).toEqual(await shape(byUpdate));
		await db.sql`select job_succeed(${byFunction}, attempt => 1)`;
		await db.sql`update jobs set status = 'done' where id = ${byUpdate}`;
		const done = async (id: string) => {
			const [r] = await db.sql`select status, progress, payload, error, error_code, expected_end_at,
				finished_at is not null as finished, updated_at > started_at as touched from jobs where id = ${id}`;
			return r;
		};
		expect(await done(byFunction)).toEqual(await done(byUpdate));
		expect((await done(byFunction))!).toMatchObject({ status: 'done', progress: 100, payload: null, finished: true });
	});
});
