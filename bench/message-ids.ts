/**
 * What a message row's id costs in WAL: realtime.messages' primary key is
 * (id, inserted_at), and its default id is random (gen_random_uuid), so each
 * row lands on a random page of that index; the first change of a page after a
 * checkpoint writes the whole page to the WAL (full_page_writes, on in every
 * hosted database). The package writes a time-ordered id instead
 * (send_job_messages, supabase/schemas/09_realtime.sql). Measured on a durable
 * embedded PostgreSQL: the table filled with N rows, a CHECKPOINT, then 500
 * one-message transactions as the per-job path writes them, through
 * send_job_messages and through a plain insert taking the table's default id
 * (what realtime.send does), WAL bytes per message.
 *
 * `node --import ./bench/ts-loader.mjs bench/message-ids.ts` (BENCH_MESSAGE_FILLS=0,20000,100000).
 */
import postgres from 'postgres';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { applyCompat, applyMigrations } from '../src/local/postgres/migrate.ts';

const FILLS = (process.env.BENCH_MESSAGE_FILLS ?? '0,20000,100000').split(',').map(Number);
const MESSAGES = 500;

/** A claim's message as job_messages builds it (a running job with an owner). */
const BODY = {
	id: '0197f7a4-0000-7000-8000-000000000001',
	kind: 'noop',
	status: 'running',
	progress: 0,
	attempts: 1,
	max_attempts: 3,
	job_table: 'jobs',
	created_at: '2026-12-05T12:00:00.123456+00:00',
	updated_at: '2026-12-05T12:00:01.123456+00:00',
	available_at: '2026-12-05T12:00:00.123456+00:00',
	started_at: '2026-12-05T12:00:01.123456+00:00',
};

export async function messageIdWal(fills = FILLS): Promise<string[]> {
	const pg = await startLocalPostgres({ durable: true });
	const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
	try {
		await applyCompat(pg.url);
		await applyMigrations(pg.url);
		const body = JSON.stringify(BODY);
		const topic = (i: number) => `jobs:0197f7a4-0000-7000-8000-00000000000${i % 10}`;
		const ways = {
			'time-ordered id (send_job_messages)': (i: number) =>
				sql`select supabase_jobs.send_job_messages(array[${topic(i)}], array[${body}::jsonb])`,
			"random id (the table's default)": (i: number) =>
				sql`insert into realtime.messages (payload, event, topic, private, extension)
				    values (${body}::jsonb, 'job', ${topic(i)}, true, 'broadcast')`,
		};
		// Once each first: a first call's catalog reads (hint bits) are not a message's cost.
		for (const send of Object.values(ways)) await send(0);
		const lines: string[] = [];
		for (const fill of fills)
			for (const [name, send] of Object.entries(ways)) {
				await sql`truncate realtime.messages`;
				// The rows already there, written the same way (one DO block: a row each, as the per-job path writes them).
				const one = name.startsWith('time')
					? `perform supabase_jobs.send_job_messages(array[t], array[b])`
					: `insert into realtime.messages (payload, event, topic, private, extension) values (b, 'job', t, true, 'broadcast')`;
				await sql.unsafe(`do $$ declare b jsonb := '${body}'; t text; begin
					for i in 1..${fill} loop t := 'jobs:0197f7a4-0000-7000-8000-00000000000' || (i % 10); ${one}; end loop; end $$`);
				await sql`checkpoint`;
				const [{ at }] = await sql<{ at: string }[]>`select pg_current_wal_insert_lsn()::text as at`;
				for (let i = 0; i < MESSAGES; i++) await send(i);
				const [{ bytes }] = await sql<{ bytes: number }[]>`
					select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${at}::pg_lsn)::float8 as bytes`;
				lines.push(`${fill} rows in realtime.messages, ${name}: ${Math.round(bytes! / MESSAGES)} WAL bytes a message`);
			}
		return lines;
	} finally {
		await sql.end();
		await pg.stop();
	}
}

if (process.argv[1]?.endsWith('message-ids.ts')) for (const line of await messageIdWal()) console.log(line);
