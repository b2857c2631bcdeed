/**
 * A broadcast never fails a write, with no subtransaction per statement:
 * send_job_messages asks realtime_ready whether realtime.messages can take a
 * row now (it exists, the writer may insert, a partition holds the current
 * time) and drops the messages with a warning when it cannot.
 */
import { describe, expect, test } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';

const db = await useTestDatabase();
const sql = db.sql;

/** A connection of its own (realtime_ready remembers its answer per session), with the warnings it got. */
function session() {
	const warnings: string[] = [];
	const conn = db.connect({ max: 1, onnotice: (n) => warnings.push(String(n.message)) });
	return { conn, warnings };
}

const count = async (id: string) =>
	(await sql<{ n: number }[]>`select count(*)::int as n from realtime.messages where payload ->> 'id' = ${id}`)[0]!.n;

describe('when realtime.messages cannot take a message', () => {
	test('a partitioned realtime.messages without a partition for now: the state change commits, its message is dropped with a warning; with one, it is sent', async () => {
		// Supabase's shape: partitioned by day on inserted_at.
		await sql.begin(async (tx) => {
			await tx`alter table realtime.messages rename to messages_plain`;
			await tx`create table realtime.messages (like realtime.messages_plain including defaults) partition by range (inserted_at)`;
			await tx`create table realtime.messages_old partition of realtime.messages for values from ('2000-01-01') to ('2000-01-02')`;
		});
		const { conn, warnings } = session();
		const [job] = await conn<{ id: string }[]>`select id from public.job_enqueue('unready')`;
		const [claimed] = await conn<{ status: string }[]>`select status from public.job_claim(${job!.id})`;
		expect(claimed!.status).toBe('running');
		expect(await count(job!.id)).toBe(0);
		expect(warnings.some((w) => w.startsWith('ErrorSendingBroadcastMessage'))).toBe(true);

		await sql`create table realtime.messages_now partition of realtime.messages for values from ('2000-01-02') to ('3000-01-01')`;
		await conn`select public.job_tick(${job!.id}, 50)`;
		expect(await count(job!.id)).toBe(1);
		await conn.end();
	});

	test('no realtime.messages at all: writes commit, nothing is sent, each statement warns', async () => {
		await sql`alter table realtime.messages rename to messages_gone`;
		const { conn, warnings } = session();
		const [job] = await conn<{ id: string }[]>`select id from public.job_enqueue('unready')`;
		await conn`select public.job_claim(${job!.id})`;
		const [row] = await conn<{ status: string }[]>`select status from public.job_get(${job!.id})`;
		expect(row!.status).toBe('running');
		expect(warnings.filter((w) => w.startsWith('ErrorSendingBroadcastMessage'))).toHaveLength(1);
		await conn.end();
		await sql`alter table realtime.messages_gone rename to messages`;
	});
});
