/**
 * The admin actions through JobStore, over any transport: cancelMany,
 * pauseKind / resumeKind, setRateLimit, deleteFinished and adminKinds, as an
 * admin (app_metadata.role = 'admin') and as the service role; an ordinary
 * user is refused each with PermissionDeniedError; bad input is refused by
 * field before any round trip, and by the database with the same class when
 * it gets through. Run over postgres.js and over supabase-js via the stand-in.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidJobInputError, PermissionDeniedError } from '../../src/lib/errors.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { CancelManyFilter, DeleteFinishedFilter, RateLimit } from '../../src/lib/store/store-options.ts';
import { counting, type ConformanceHarness } from './harness.ts';
import { rejection, signedIn, uniqueKind } from './conformance-setup.ts';

/**
 * Registers the suite. `setup` runs once (beforeAll) and returns the harness.
 *
 * @example
 * describeAdminConformance('postgres.js', async () => harness);
 */
export function describeAdminConformance(label: string, setup: () => Promise<ConformanceHarness>): void {
	let h: ConformanceHarness;
	let worker: JobStore;
	let admin: JobStore;
	const asUser = () => signedIn(h);

	beforeAll(async () => {
		h = await setup();
		worker = new JobStore(h.adapter({ role: 'service_role' }));
		admin = new JobStore(h.adapter({ role: 'authenticated', sub: await h.createUser(), admin: true }));
	});

	describe(`Admin actions over ${label}`, () => {
		test('pausing a kind: no claim takes it (next or by id), its queued job says paused, and a resume lets it run', async () => {
			const kind = uniqueKind('paused');
			const other = uniqueKind('unpaused');
			const alice = await asUser();
			const job = await worker.enqueue(kind, { ownerId: alice.sub });
			const free = await worker.enqueue(other);
			expect(await admin.pauseKind(kind)).toBe(true);
			expect(await admin.pauseKind(kind)).toBe(false);
			expect((await worker.claimNext({ kinds: [kind, other], limit: 5 })).map((j) => j.id)).toEqual([free.id]);
			expect(await worker.claim(job.id)).toBeNull();
			expect((await alice.store.holdReasons([job.id])).get(job.id)).toEqual({
				kind,
				heldBy: 'paused',
				running: 0,
				maxRunning: 0,
			});
			expect((await admin.adminKinds()).find((k) => k.kind === kind)?.pausedAt).toBeInstanceOf(Date);
			expect(await admin.resumeKind(kind)).toBe(true);
			expect(await admin.resumeKind(kind)).toBe(false);
			expect((await alice.store.holdReasons([job.id])).size).toBe(0);
			expect((await worker.claim(job.id))?.id).toBe(job.id);
		});

		test('a rate limit: at most `starts` jobs of the kind start per window, the next says so, and null removes it', async () => {
			const kind = uniqueKind('rated');
			const alice = await asUser();
			for (let i = 0; i < 4; i++) await worker.enqueue(kind, { ownerId: alice.sub });
			await admin.setRateLimit(kind, { starts: 2, perMs: 60_000 });
			expect(await worker.claimNext({ kinds: [kind], limit: 4 })).toHaveLength(2);
			expect(await worker.claimNext({ kinds: [kind], limit: 4 })).toEqual([]);
			const queued = (await alice.store.listRecent({ kind, status: 'queued' })).jobs.map((j) => j.id);
			expect(queued).toHaveLength(2);
			expect([...(await alice.store.holdReasons(queued)).values()]).toEqual([
				{ kind, heldBy: 'rate', running: 2, maxRunning: 2 },
				{ kind, heldBy: 'rate', running: 2, maxRunning: 2 },
			]);
			expect((await admin.adminKinds()).find((k) => k.kind === kind)?.rateLimit).toEqual({ starts: 2, perMs: 60_000 });
			await admin.setRateLimit(kind, null);
			expect((await admin.adminKinds()).find((k) => k.kind === kind)?.rateLimit).toBeNull();
			expect(await worker.claimNext({ kinds: [kind], limit: 4 })).toHaveLength(2);
		});

		test('cancelMany cancels the matching unfinished jobs of every owner, oldest first up to limit, and says how many', async () => {
			const kind = uniqueKind('bulk');
			const [alice, bob] = [await asUser(), await asUser()];
			const a1 = await alice.store.enqueue(kind);
			const b1 = await bob.store.enqueue(kind);
			const a2 = await alice.store.enqueue(kind);
			const running = await worker.claim(b1.id);
			expect(running?.status).toBe('running');
			expect(await admin.cancelMany({ kind, reason: 'Stopped for maintenance.', limit: 2 })).toBe(2);
			expect((await alice.store.get(a1.id)).status).toBe('cancelled');
			expect((await bob.store.get(b1.id)).error).toBe('Stopped for maintenance.');
			expect((await alice.store.get(a2.id)).status).toBe('queued');
			expect(await worker.cancelMany({ kind, ownerId: alice.sub, statuses: ['queued'] })).toBe(1);
			expect(await admin.cancelMany({ kind })).toBe(0);
		});

		test('deleteFinished deletes the finished jobs ended before the time, of the statuses asked, and says how many', async () => {
			const kind = uniqueKind('finished');
			const done = await worker.enqueue(kind);
			await worker.claim(done.id);
			await worker.succeed(done.id);
			const cancelled = await worker.enqueue(kind);
			await worker.cancel(cancelled.id);
			const queued = await worker.enqueue(kind);
			const later = new Date(Date.now() + 60_000);
			expect(await admin.deleteFinished({ endedBefore: new Date(Date.now() - 3_600_000), kind })).toBe(0);
			expect(await admin.deleteFinished({ endedBefore: later, kind, statuses: ['cancelled'] })).toBe(1);
			expect(await worker.deleteFinished({ endedBefore: later, kind })).toBe(1);
			expect((await worker.listRecent({ kind })).jobs.map((j) => j.id)).toEqual([queued.id]);
		});

		test('adminKinds reads each kind: jobs by status, the last hour, pause, rate and concurrency limits', async () => {
			const kind = uniqueKind('dashboard');
			const failed = await worker.enqueue(kind);
			await worker.claim(failed.id);
			await worker.fail(failed.id, 'Broken.');
			await worker.enqueue(kind);
			await worker.setConcurrency(kind, { maxRunning: 3 });
			await admin.setRateLimit(kind, { starts: 10, perMs: 1000 });
			const row = (await admin.adminKinds()).find((k) => k.kind === kind);
			expect(row).toEqual({
				kind,
				counts: { queued: 1, running: 0, waiting: 0, done: 0, failed: 1, cancelled: 0 },
				doneLastHour: 0,
				failedLastHour: 1,
				pausedAt: null,
				rateLimit: { starts: 10, perMs: 1000 },
				maxRunning: 3,
				maxRunningPerKey: null,
			});
			expect(await worker.adminKinds()).toContainEqual(row);
		});

		test('an ordinary user is refused every admin action with PermissionDeniedError, and nothing changes', async () => {
			const kind = uniqueKind('refused');
			const alice = await asUser();
			const job = await alice.store.enqueue(kind);
			const calls: [string, () => Promise<unknown>][] = [
				['cancelMany', () => alice.store.cancelMany({ kind })],
				['pauseKind', () => alice.store.pauseKind(kind)],
				['resumeKind', () => alice.store.resumeKind(kind)],
				['setRateLimit', () => alice.store.setRateLimit(kind, { starts: 1, perMs: 1000 })],
				['deleteFinished', () => alice.store.deleteFinished({ endedBefore: new Date() })],
				['adminKinds', () => alice.store.adminKinds()],
			];
			for (const [name, call] of calls) {
				const e = await rejection(call());
				expect([name, e instanceof PermissionDeniedError]).toEqual([name, true]);
			}
			expect((await alice.store.get(job.id)).status).toBe('queued');
			expect((await admin.adminKinds()).find((k) => k.kind === kind)).toMatchObject({
				pausedAt: null,
				rateLimit: null,
			});
		});

		test('bad input is refused naming the field, before any round trip', async () => {
			const counted = counting(h.adapter({ role: 'service_role' }));
			const store = new JobStore(counted.adapter);
			const cases: [string, () => Promise<unknown>][] = [
				['kind', () => store.pauseKind('has space')],
				['kind', () => store.resumeKind('')],
				['starts', () => store.setRateLimit('k', { starts: 0, perMs: 1000 })],
				['starts', () => store.setRateLimit('k', { starts: 1.5, perMs: 1000 })],
				['perMs', () => store.setRateLimit('k', { starts: 1, perMs: 99 })],
				['perMs', () => store.setRateLimit('k', { starts: 1 } as RateLimit)],
				['kind', () => store.cancelMany({})],
				['statuses', () => store.cancelMany({ statuses: ['done'] as unknown as CancelManyFilter['statuses'] })],
				['statuses', () => store.cancelMany({ statuses: [] })],
				['createdBefore', () => store.cancelMany({ createdAfter: new Date(), createdBefore: new Date(0) })],
				['createdAfter', () => store.cancelMany({ createdAfter: new Date(Number.NaN) })],
				['ownerId', () => store.cancelMany({ ownerId: 'not-a-uuid' })],
				['limit', () => store.cancelMany({ kind: 'k', limit: 1001 })],
				['endedBefore', () => store.deleteFinished({} as DeleteFinishedFilter)],
				['statuses', () => store.deleteFinished({ endedBefore: new Date(), statuses: ['queued' as 'done'] })],
				['limit', () => store.deleteFinished({ endedBefore: new Date(), limit: 0 })],
			];
			for (const [field, call] of cases) {
				const e = await rejection(call());
				expect([field, e instanceof InvalidJobInputError && e.field]).toEqual([field, field]);
			}
			expect(counted.calls).toEqual([]);
		});

		test('the database refuses the same input by field when a caller skips the store, named as the TypeScript option', async () => {
			const adapter = h.adapter({ role: 'service_role' });
			const cases: [string, () => Promise<unknown>][] = [
				['starts', () => adapter.call('job_set_rate_limit', { kind: 'k', starts: 0, per_ms: 1000 })],
				['perMs', () => adapter.call('job_set_rate_limit', { kind: 'k', starts: 1 })],
				['kind', () => adapter.call('job_pause_kind', { kind: 'has space' })],
				['kind', () => adapter.call('job_cancel_many', {})],
				['statuses', () => adapter.call('job_cancel_many', { statuses: ['done'] })],
				['endedBefore', () => adapter.call('job_delete_finished', { ended_before: null })],
			];
			for (const [field, call] of cases) {
				const e = await rejection(call());
				expect([field, e instanceof InvalidJobInputError && e.field]).toEqual([field, field]);
			}
		});
	});
}
