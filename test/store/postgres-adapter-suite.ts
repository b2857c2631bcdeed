/**
 * JobStore over postgres.js against the embedded database: the conformance
 * suite, plus what only this transport can show (unnamed statements through a
 * transaction pooler, nothing held between calls, the "as a user" mode). Run
 * once per major version of the driver the package supports (3 and 4): the
 * adapter's client is the application's, whichever npm installed.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { claimsFor, createUser, type Sql, type TestDatabase } from '../helpers/db.ts';
import { describeAdminConformance } from './admin-conformance.ts';
import { describeJobStoreConformance } from './conformance.ts';
import { describeParentChildConformance } from './family-conformance.ts';
import { describeQuestionsConformance } from './questions-conformance.ts';
import { describeJobOutputConformance } from './output-conformance.ts';
import { databaseChores, Signal, type ConformanceHarness } from './harness.ts';

/** Opens a client of the driver under test on the file's database (closed after the file). */
export type ConnectDriver = (options: { prepare?: boolean; max: number }) => Sql;

/**
 * Registers the conformance suites and the adapter's own tests over clients
 * that `connect` opens; fixtures go through the file's superuser client (db.sql).
 *
 * @example
 * describePostgresAdapter('postgres.js 3', db, (options) => db.connect(options));
 */
export function describePostgresAdapter(label: string, db: TestDatabase, connect: ConnectDriver): void {
	// As a transaction pooler requires: no named prepared statements.
	const sql = connect({ prepare: false, max: 4 });

	const harness: ConformanceHarness = {
		// Both roles as PostgREST would run them: a service key, or a user's session.
		adapter: (caller) => postgresAdapter(sql, { claims: claimsFor(caller) }),
		...databaseChores(db.sql),
	};
	describeJobStoreConformance(label, async () => harness);
	describeParentChildConformance(label, async () => harness);
	describeAdminConformance(label, async () => harness);
	describeQuestionsConformance(label, async () => harness);
	describeJobOutputConformance(label, async () => harness);

	describe(`postgresAdapter over ${label}`, () => {
		test('a worker connecting as the database owner needs no claims', async () => {
			const store = new JobStore(postgresAdapter(sql));
			const job = await store.enqueue('owner-direct', { payload: new Uint8Array([0, 1, 2, 255]) });
			const claimed = await store.claim(job.id);
			expect(claimed?.payload).toEqual(new Uint8Array([0, 1, 2, 255]));
			expect(claimed?.payload?.constructor).toBe(Uint8Array);
		});

		test('a default client reuses one named statement per call shape; a pooler client (prepare: false) names none', async () => {
			const named = async (client: Sql) =>
				(
					await client<{ n: number }[]>`
					select count(*)::int as n from pg_prepared_statements where statement like '%job_get%' and statement not like '%pg_prepared_statements%'`
				)[0]!.n;
			for (const [client, expected] of [
				[connect({ max: 1 }), 1],
				[connect({ prepare: false, max: 1 }), 0],
			] as const) {
				const store = new JobStore(postgresAdapter(client));
				const job = await store.enqueue('prepared');
				for (let i = 0; i < 3; i++) await store.get(job.id);
				expect(await named(client)).toBe(expected);
			}
		});

		test('each call is its own unit of work: nothing is left open between calls', async () => {
			const own = connect({ prepare: false, max: 1 });
			const store = new JobStore(postgresAdapter(own, { claims: { role: 'service_role' } }));
			const job = await store.enqueue('unit-of-work');
			await store.get(job.id);
			const open = await db.sql<{ n: number }[]>`
			select count(*)::int as n from pg_stat_activity
			 where datname = current_database() and state like 'idle in transaction%' and pid <> pg_backend_pid()`;
			expect(open[0]!.n).toBe(0);
		});

		test('no session is held between ticks: a screen and a worker share a pool of ONE connection', async () => {
			const one = connect({ prepare: false, max: 1 });
			const store = new JobStore(postgresAdapter(one));
			const job = await store.enqueue('one-connection');
			const seen: [string, number][] = [];
			const frames = new Signal();
			const watching = (async () => {
				for await (const j of store.watch(job.id, { intervalMs: 5, emitOn: ['status', 'progress'] })) {
					seen.push([j.status, j.progress]);
					frames.notify();
				}
			})();
			await frames.until(() => seen.length === 1);
			const claimed = (await store.claim(job.id))!;
			await frames.until(() => seen.length === 2);
			await store.tick(job.id, { progress: 50, stage: 'half', attempt: claimed.attempts });
			await frames.until(() => seen.length === 3);
			await store.succeed(job.id, { attempt: claimed.attempts });
			await watching;
			expect(seen).toEqual([
				['queued', 0],
				['running', 0],
				['running', 50],
				['done', 100],
			]);
		});

		test('"as a user" sets role and request.jwt.claims like PostgREST, so RLS decides', async () => {
			const alice = await createUser(db.sql);
			let asked = 0;
			const store = new JobStore(
				postgresAdapter(sql, {
					claims: () => {
						asked++;
						return claimsFor(alice);
					},
				}),
			);
			const job = await store.enqueue('as-user');
			expect(job.ownerId).toBe(alice.sub);
			expect(asked).toBe(1); // read per call, so a refreshed session is picked up
			const [row] = await db.sql<{ owner_id: string }[]>`select owner_id from public.jobs where id = ${job.id}`;
			expect(row!.owner_id).toBe(alice.sub);
		});

		test("a user cannot enqueue on someone else's behalf", async () => {
			const alice = await createUser(db.sql);
			const store = new JobStore(postgresAdapter(sql, { claims: claimsFor(alice) }));
			await expect(store.enqueue('as-other', { ownerId: randomUUID() })).rejects.toMatchObject({
				code: 'permission_denied',
			});
		});

		test('timestamps keep their microseconds in cursors, so jobs created in the same millisecond are not skipped', async () => {
			const kind = `same-ms-${randomUUID().slice(0, 8)}`;
			const store = new JobStore(postgresAdapter(sql));
			const ids: string[] = [];
			for (let i = 0; i < 4; i++) ids.push((await store.enqueue(kind)).id);
			// Put all four inside one millisecond, 100 µs apart. The guard freezes
			// created_at, so this fixture bypasses triggers (replica role) for one transaction.
			await db.sql.begin(async (tx) => {
				await tx`set local session_replication_role = replica`;
				await tx`
				update public.jobs set created_at = timestamptz '2026-01-01 00:00:00.000100+00' + make_interval(secs => (x.n * 100)::double precision / 1e6)
				  from (select id, row_number() over (order by created_at) as n from public.jobs where kind = ${kind}) x
				 where jobs.id = x.id`;
			});
			const first = await store.listRecent({ kind, limit: 2 });
			expect(first.nextCursor).toMatch(/^2026-01-01T00:00:00\.0004\+00:00~/); // sub-millisecond digits kept
			const second = await store.listRecent({ kind, limit: 2, cursor: first.nextCursor });
			expect([...first.jobs, ...second.jobs].map((j) => j.id)).toEqual([...ids].reverse());
		});
	});
}
