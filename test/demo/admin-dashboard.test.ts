/**
 * The admin dashboard's route module as SvelteKit runs it, mounted by the
 * demo at /admin (src/routes/admin/+page.server.ts, `createAdminDashboard`
 * behind the demo's own admin check), against the stand-in over this file's
 * database: an admin's load and actions, a visitor's 403 from each, and the
 * database's own refusal when an app's check lets a non-admin through.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import type { DashboardActionName, DashboardActionResult, JobsDashboardData } from '../../src/lib/kit.ts';
import { createAdminDashboard } from '../../src/lib/kit.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { clientFor, type DemoSession } from '../../src/demo/app/session.server.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { actions, load } from '../../src/routes/admin/+page.server.ts';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { JWT_SECRET } from '../standin/helpers.ts';

let db: TestDatabase;
let standin: Standin;
let visitor: string;
let failedId: string;
let admin: DemoSession;
let plain: DemoSession;

async function sessionFor(userId: string, appMetadata: Record<string, unknown>): Promise<DemoSession> {
	const accessToken = await standin.mintUserToken(userId, { claims: { app_metadata: appMetadata } });
	return { accessToken, refreshToken: null, userId, expiresAt: decodeJwt(accessToken).exp! };
}

function locals(session: DemoSession) {
	return {
		config: {
			supabaseUrl: standin.url,
			anonKey: standin.anonKey,
			auth: { mode: 'standin' as const, jwtSecret: JWT_SECRET, databaseUrl: db.url },
		},
		session,
		locale: 'en' as const,
	};
}

/** The page's load as SvelteKit calls it for GET /admin<query>. */
async function loadAs(session: DemoSession, query = ''): Promise<{ jobs: JobsDashboardData }> {
	const url = new URL(`http://app.test/admin${query}`);
	const event = { locals: locals(session), url, request: new Request(url) };
	return (await load(event as unknown as Parameters<typeof load>[0])) as { jobs: JobsDashboardData };
}

/** One action as SvelteKit calls it for POST /admin?/<name> with these form fields. */
async function post(
	session: DemoSession,
	name: DashboardActionName,
	fields: Record<string, string>,
): Promise<DashboardActionResult | { status: number; data: DashboardActionResult }> {
	const url = new URL(`http://app.test/admin?/${name}`);
	const body = new FormData();
	for (const [k, v] of Object.entries(fields)) body.set(k, v);
	const event = { locals: locals(session), url, request: new Request(url, { method: 'POST', body }) };
	const run = actions[name] as (e: unknown) => Promise<DashboardActionResult>;
	return await run(event);
}

async function failJob(owner: string, kind: string, error: string, code: string): Promise<string> {
	const [job] = await as(
		db.sql,
		{ role: 'authenticated', sub: owner },
		(tx) => tx<{ id: string }[]>`select id from job_enqueue(${kind})`,
	);
	await as(db.sql, serviceRole, async (tx) => {
		await tx`select * from job_claim(${job!.id})`;
		await tx`select * from job_fail(${job!.id}, ${error}, 1, ${code})`;
	});
	return job!.id;
}

beforeAll(async () => {
	db = await useTestDatabase();
	standin = await createStandin({ databaseUrl: db.url, jwtSecret: JWT_SECRET });
	visitor = (await createUser(db.sql)).sub;
	const other = (await createUser(db.sql)).sub;
	for (let i = 0; i < 2; i++)
		await as(db.sql, { role: 'authenticated', sub: visitor }, (tx) => tx`select job_enqueue('dash-analyse')`);
	failedId = await failJob(other, 'dash-export', 'The export ran out of disk.', 'disk_full');
	admin = await sessionFor((await createUser(db.sql)).sub, { provider: 'anonymous', role: 'admin' });
	plain = await sessionFor(visitor, { provider: 'anonymous' });
});

afterAll(async () => {
	await standin?.close();
});

describe('the admin dashboard, for an admin', () => {
	it('loads every user’s queues by kind and the failed jobs with the sentence their user saw and its code', async () => {
		const { jobs } = await loadAs(admin);
		const analyse = jobs.kinds.find((k) => k.kind === 'dash-analyse')!;
		expect(analyse.counts.queued).toBe(2);
		expect(analyse.pausedAt).toBeNull();
		expect(jobs.kinds.find((k) => k.kind === 'dash-export')!.counts.failed).toBe(1);
		expect(jobs.failed).toContainEqual(
			expect.objectContaining({
				id: failedId,
				kind: 'dash-export',
				error: 'The export ran out of disk.',
				errorCode: 'disk_full',
			}),
		);
		expect(jobs.actions).toEqual([
			'cancel',
			'tryAgain',
			'replay',
			'cancelMany',
			'pause',
			'resume',
			'setRateLimit',
			'clearRateLimit',
			'deleteFinished',
		]);
		expect(jobs.selected).toBeNull();
	});

	it('filters the failed jobs by kind and error code, and opens one job with its timeline', async () => {
		expect((await loadAs(admin, '?errorCode=timeout')).jobs.failed).toEqual([]);
		const { jobs } = await loadAs(admin, `?kind=dash-export&errorCode=disk_full&job=${failedId}`);
		expect(jobs.filter).toEqual({ kind: 'dash-export', errorCode: 'disk_full' });
		expect(jobs.failed.map((j) => j.id)).toEqual([failedId]);
		expect(jobs.selected!.job).toMatchObject({ id: failedId, status: 'failed' });
		expect(jobs.selected!.timeline.map((e) => e.event)).toEqual(['queued', 'claimed', 'failed']);
	});

	it('pauses a kind and the next load shows it paused; resuming clears it', async () => {
		expect(await post(admin, 'pause', { kind: 'dash-analyse' })).toEqual({
			action: 'pause',
			ok: true,
			kind: 'dash-analyse',
			count: 1,
		});
		const paused = (await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-analyse')!;
		expect(paused.pausedAt).toBeInstanceOf(Date);
		expect(await post(admin, 'resume', { kind: 'dash-analyse' })).toMatchObject({ ok: true, count: 1 });
		expect((await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-analyse')!.pausedAt).toBeNull();
	});

	it('sets a kind’s rate limit (starts per seconds) and the next load shows it; clearing removes it', async () => {
		expect(await post(admin, 'setRateLimit', { kind: 'dash-analyse', starts: '10', perSeconds: '1.5' })).toEqual({
			action: 'setRateLimit',
			ok: true,
			kind: 'dash-analyse',
			count: 1,
		});
		const limited = (await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-analyse')!;
		expect(limited.rateLimit).toEqual({ starts: 10, perMs: 1500 });
		expect(await post(admin, 'clearRateLimit', { kind: 'dash-analyse' })).toMatchObject({ ok: true, count: 1 });
		expect((await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-analyse')!.rateLimit).toBeNull();
	});

	it('refuses a rate limit out of range with 400 naming the field, and sets nothing', async () => {
		for (const [fields, field] of [
			[{ starts: '0', perSeconds: '1' }, 'starts'],
			[{ starts: '2.5', perSeconds: '1' }, 'starts'],
			[{ perSeconds: '1' }, 'starts'],
			[{ starts: '5', perSeconds: '0.01' }, 'perSeconds'],
			[{ starts: '5', perSeconds: 'soon' }, 'perSeconds'],
			[{ starts: '5', perSeconds: '86401' }, 'perSeconds'],
		] as const)
			expect(
				await post(admin, 'setRateLimit', { kind: 'dash-analyse', ...fields }),
				JSON.stringify(fields),
			).toMatchObject({
				status: 400,
				data: { action: 'setRateLimit', ok: false, code: 'invalid_input', field },
			});
		expect((await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-analyse')!.rateLimit).toBeNull();
	});

	it('tries a failed job again: a new queued job linked to the old one, which the page can open', async () => {
		const result = await post(admin, 'tryAgain', { id: failedId });
		expect(result).toMatchObject({ action: 'tryAgain', ok: true, jobId: failedId, count: 1 });
		const newId = (result as { newJobId: string }).newJobId;
		expect(newId).not.toBe(failedId);
		const { jobs } = await loadAs(admin, `?job=${newId}`);
		expect(jobs.selected!.job).toMatchObject({ id: newId, status: 'queued', retryOf: failedId, kind: 'dash-export' });
	});

	it('replays in bulk the failed jobs the filter matches, and only those', async () => {
		const other = (await createUser(db.sql)).sub;
		const timedOut = await failJob(other, 'dash-replay', 'The service did not answer in time.', 'timeout');
		await failJob(other, 'dash-replay', 'The file was empty.', 'empty_file');
		const result = await post(admin, 'replay', { kind: 'dash-replay', errorCode: 'timeout' });
		expect(result).toEqual({ action: 'replay', ok: true, count: 1 });
		const [again] = await db.sql<{ id: string }[]>`select id from supabase_jobs.job where retry_of = ${timedOut}`;
		expect(again).toBeDefined();
	});

	it('cancels one job, and a kind’s queued jobs in bulk', async () => {
		const [one] = await as(
			db.sql,
			{ role: 'authenticated', sub: visitor },
			(tx) => tx<{ id: string }[]>`select id from job_enqueue('dash-cancel')`,
		);
		await as(db.sql, { role: 'authenticated', sub: visitor }, (tx) => tx`select job_enqueue('dash-cancel')`);
		await as(db.sql, { role: 'authenticated', sub: visitor }, (tx) => tx`select job_enqueue('dash-cancel')`);
		expect(await post(admin, 'cancel', { id: one!.id })).toMatchObject({ ok: true, count: 1, jobId: one!.id });
		expect(await post(admin, 'cancel', { id: one!.id }), 'nothing left to stop').toMatchObject({ ok: true, count: 0 });
		expect(await post(admin, 'cancelMany', { kind: 'dash-cancel' })).toMatchObject({ ok: true, count: 2 });
		const counts = (await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-cancel')!.counts;
		expect(counts).toMatchObject({ queued: 0, cancelled: 3 });
	});

	it('deletes a kind’s finished jobs that ended before a time', async () => {
		const result = await post(admin, 'deleteFinished', {
			kind: 'dash-cancel',
			to: new Date(Date.now() + 60_000).toISOString().slice(0, 16),
		});
		expect(result).toEqual({ action: 'deleteFinished', ok: true, kind: 'dash-cancel', count: 3 });
		expect((await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-cancel')).toBeUndefined();
	});

	it('refuses bad input with 400 naming the field, and changes nothing', async () => {
		expect(await post(admin, 'pause', { kind: '' })).toMatchObject({
			status: 400,
			data: { action: 'pause', ok: false, code: 'invalid_input', field: 'kind' },
		});
		expect(await post(admin, 'deleteFinished', { kind: 'dash-analyse' })).toMatchObject({
			status: 400,
			data: { ok: false, field: 'to' },
		});
		expect(await post(admin, 'tryAgain', { id: 'not-a-job' })).toMatchObject({ status: 400, data: { field: 'id' } });
		expect(await post(admin, 'replay', { from: '2026-12-02T00:00', to: '2026-12-01T00:00' })).toMatchObject({
			status: 400,
			data: { field: 'to' },
		});
		expect((await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-analyse')!.counts.queued).toBe(2);
	});
});

describe('the admin dashboard, for anyone else', () => {
	it('answers a visitor 403 from the load, with no figures', async () => {
		await expect(loadAs(plain)).rejects.toMatchObject({ status: 403 });
	});

	it.each([
		'cancel',
		'tryAgain',
		'replay',
		'cancelMany',
		'pause',
		'resume',
		'setRateLimit',
		'clearRateLimit',
		'deleteFinished',
	] as const)('answers a visitor 403 from the %s action, and nothing changes', async (name) => {
		const fields = { id: failedId, kind: 'dash-analyse', to: '2030-01-01T00:00', starts: '1', perSeconds: '60' };
		await expect(post(plain, name, fields)).rejects.toMatchObject({ status: 403 });
		const { jobs } = await loadAs(admin);
		expect(jobs.kinds.find((k) => k.kind === 'dash-analyse')).toMatchObject({
			pausedAt: null,
			rateLimit: null,
			counts: expect.objectContaining({ queued: 2 }),
		});
	});

	it('answers 403 when an app’s own check wrongly lets a non-admin in: the database refuses the admin calls', async () => {
		const leaky = createAdminDashboard<{ url: URL; request: Request }>({
			getStore: () => new JobStore(supabaseAdapter(clientFor(locals(plain).config, plain))),
			isAdmin: () => true,
		});
		const url = new URL('http://app.test/admin');
		await expect(leaky.load({ url, request: new Request(url) })).rejects.toMatchObject({ status: 403 });
		const body = new FormData();
		body.set('kind', 'dash-analyse');
		const postUrl = new URL('http://app.test/admin?/pause');
		await expect(
			leaky.actions.pause({ url: postUrl, request: new Request(postUrl, { method: 'POST', body }) }),
		).rejects.toMatchObject({ status: 403 });
		expect((await loadAs(admin)).jobs.kinds.find((k) => k.kind === 'dash-analyse')!.pausedAt).toBeNull();
	});
});
