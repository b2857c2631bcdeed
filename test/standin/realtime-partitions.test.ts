/**
 * realtime.messages as hosted Realtime keeps it: partitioned by day on
 * inserted_at (messages_YYYY_MM_DD), yesterday to today + 3 made when the
 * project connects and by the janitor, partitions older than 72 h dropped.
 * With no partition for now an insert fails (23514) and a private join's
 * authorization probe fails with upstream's MissingPartition reason.
 */
import { describe, expect, it } from 'vitest';
import { createStandin } from '../../src/local/standin/server.ts';
import { createUser } from '../helpers/db.ts';
import { JWT_SECRET, RawSocket, useStandin } from './helpers.ts';

const f = await useStandin(`
  create policy "user topic read" on realtime.messages for select to authenticated
    using (extension = 'broadcast' and (select realtime.topic()) = 'user:' || (select auth.uid())::text);
`);
const sql = f.db.sql;
const DAY = 24 * 60 * 60 * 1000;
const day = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10);
const name = (offset: number) => `messages_${day(offset).replaceAll('-', '_')}`;

async function partitions(): Promise<string[]> {
	const rows = await sql<{ name: string }[]>`
		select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
		where i.inhparent = 'realtime.messages'::regclass order by 1`;
	return rows.map((r) => r.name);
}

async function privateJoin(topicUser?: string): Promise<{ status: string; response: { reason?: string } }> {
	const user = await createUser(sql);
	const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
	const { reply } = await s.join(`realtime:user:${topicUser ?? user.sub}`, {
		config: { private: true },
		access_token: await f.standin.mintUserToken(user.sub),
	});
	s.ws.close();
	return reply.payload as { status: string; response: { reason?: string } };
}

describe('realtime.messages partitions', () => {
	it('is partitioned by range on inserted_at, primary key (id, inserted_at), one partition a day from yesterday to today + 3', async () => {
		const [shape] = await sql<{ strategy: string; key: string; pk: string }[]>`
			select p.partstrat as strategy, pg_get_partkeydef(p.partrelid) as key,
			       (select pg_get_constraintdef(oid) from pg_constraint where conrelid = p.partrelid and contype = 'p') as pk
			from pg_partitioned_table p where p.partrelid = 'realtime.messages'::regclass`;
		expect(shape).toEqual({ strategy: 'r', key: 'RANGE (inserted_at)', pk: 'PRIMARY KEY (id, inserted_at)' });
		expect(await partitions()).toEqual(expect.arrayContaining([-1, 0, 1, 2, 3].map(name)));
		const [bound] = await sql<{ b: string }[]>`
			select pg_get_expr(relpartbound, oid) as b from pg_class where relname = ${name(0)}`;
		expect(bound!.b).toBe(`FOR VALUES FROM ('${day(0)} 00:00:00') TO ('${day(1)} 00:00:00')`);
	});

	it("without today's partition an insert fails with 23514 and a private join is refused with MissingPartition; the janitor makes it again", async () => {
		await sql.unsafe(`drop table realtime.${name(0)}`);
		const failed =
			await sql`insert into realtime.messages (topic, extension, event, payload) values ('t', 'broadcast', 'e', '{}')`
				.then(() => null)
				.catch((e: { code?: string }) => e.code);
		expect(failed).toBe('23514');
		const refused = await privateJoin();
		expect(refused).toEqual({
			status: 'error',
			response: { reason: 'MissingPartition: Realtime was unable to find the expected messages partition' },
		});
		expect(f.standin.realtime.stats().refused.missingPartition).toBe(1);

		await f.standin.realtime.runJanitor();
		expect(await partitions()).toContain(name(0));
		expect((await privateJoin()).status).toBe('ok');
	});

	it('the janitor drops partitions whose day is older than 72 hours and keeps the rest', async () => {
		for (const offset of [-5, -4, -3])
			await sql.unsafe(
				`create table realtime.${name(offset)} partition of realtime.messages for values from ('${day(offset)}') to ('${day(offset + 1)}')`,
			);
		await f.standin.realtime.runJanitor();
		const after = await partitions();
		expect(after).not.toContain(name(-5));
		expect(after).not.toContain(name(-4));
		// messages.ex: dropped when its date is before the date 72 h ago.
		expect(after).toContain(name(-3));
		expect(after).toEqual(expect.arrayContaining([-1, 0, 1, 2, 3].map(name)));
	});

	it("an idle project's first join connects it, making today's partition before authorizing", async () => {
		const idle = await createStandin({ databaseUrl: f.db.url, jwtSecret: JWT_SECRET, realtime: { startIdle: true } });
		try {
			await sql.unsafe(`drop table realtime.${name(0)}`);
			const user = await createUser(sql);
			const s = await RawSocket.open(idle.url, idle.anonKey);
			const { reply } = await s.join(`realtime:user:${user.sub}`, {
				config: { private: true },
				access_token: await idle.mintUserToken(user.sub),
			});
			s.ws.close();
			expect(reply.payload).toMatchObject({ status: 'ok' });
			expect(await partitions()).toContain(name(0));
		} finally {
			await idle.close();
		}
	});
});
