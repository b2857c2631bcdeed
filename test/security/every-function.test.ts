/**
 * Every function a user may call, at the SQL level, as PostgREST would call
 * it (role and request.jwt.claims set in the transaction): only the owner of a
 * job (or record) reads or writes it, an admin action is refused to every
 * user, an enqueue is for the caller only; every other caller gets exactly
 * what a job that does not exist gives, and nothing changes. The list of
 * functions comes from the catalog, so a new one without a case fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { jobIn, snapshot } from './fixtures.ts';
import {
	asCaller,
	CASES,
	createCustomRole,
	makeCallers,
	missingTarget,
	outcome,
	RECORDS_SQL,
	settle,
	userCallable,
	type Case,
	type MatrixCaller,
	type Target,
} from './matrix.ts';

let db: TestDatabase;
let drop: () => Promise<void>;
let people: Awaited<ReturnType<typeof makeCallers>>;

beforeAll(async () => {
	db = await useTestDatabase();
	await db.sql.unsafe(RECORDS_SQL);
	const custom = await createCustomRole(db.sql);
	drop = custom.drop;
	people = await makeCallers(db.sql, custom.role);
});
afterAll(async () => {
	await drop?.();
});

const call = async (caller: MatrixCaller, c: Case, t: Target) =>
	outcome(await settle(asCaller(db.sql, caller, (tx) => c.call(tx, t))), t);

/** `caller` gets for `t` exactly what a missing job gives, and nothing changes. */
async function refusedAsMissing(caller: MatrixCaller, c: Case, t: Target) {
	const before = await snapshot(db.sql, t);
	const real = await call(caller, c, t);
	const missing = await call(caller, c, missingTarget(t.owner));
	expect(real, `${c.fn} as ${caller.name} on ${t.owner ? "A's" : 'an ownerless'} job`).toBe(missing);
	expect(await snapshot(db.sql, t), `${c.fn} as ${caller.name} changed something`).toEqual(before);
}

describe('the security matrix covers every function a user may call', () => {
	it('every function of public that authenticated or anon may execute has a case, and every case names one', async () => {
		const callable = await userCallable(db.sql);
		expect(callable.length).toBeGreaterThan(20);
		expect(CASES.map((c) => c.fn).sort()).toEqual(callable);
	});
});

describe('only the owner acts on a job; every other caller gets what a missing job gives', () => {
	for (const c of CASES.filter((x) => x.scope === 'job' || x.scope === 'record')) {
		it(`${c.fn}: B, anon, a JWT without sub and a custom role see A's job as missing; nobody acts on an ownerless one`, async () => {
			const { a, callers } = people;
			const mine = await jobIn(db.sql, c, a.sub);
			for (const caller of [callers.other, callers.anon, callers.noSub, callers.custom])
				await refusedAsMissing(caller, c, mine);
			const ownerless = await jobIn(db.sql, c, null);
			for (const caller of Object.values(callers)) await refusedAsMissing(caller, c, ownerless);
			const own = await call(callers.owner, c, mine);
			expect(own, `${c.fn} as the owner`).not.toMatch(/^error/);
			if (c.ownerSees) expect(own).not.toBe(await call(callers.owner, c, missingTarget(a.sub)));
		});
	}
});

describe('admin actions are refused to every user (42501), nothing changed; an admin acts', () => {
	for (const c of CASES.filter((x) => x.scope === 'admin')) {
		it(`${c.fn}: A, B, anon, a JWT without sub and a custom role are refused; an admin is not`, async () => {
			const { a, callers, admin } = people;
			const mine = await jobIn(db.sql, c, a.sub);
			for (const caller of Object.values(callers)) {
				const before = await snapshot(db.sql, mine);
				expect(await call(caller, c, mine), `${c.fn} as ${caller.name}`).toBe('error 42501');
				expect(await snapshot(db.sql, mine)).toEqual(before);
			}
			expect(await call(admin, c, mine)).not.toMatch(/^error/);
		});
	}
});

describe('an enqueue is for the caller only', () => {
	for (const c of CASES.filter((x) => x.scope === 'enqueue')) {
		it(`${c.fn}: nobody but A enqueues a job owned by A, and nothing is queued when refused`, async () => {
			const { a, callers } = people;
			const forA = missingTarget(a.sub);
			for (const caller of [callers.other, callers.anon, callers.noSub, callers.custom]) {
				const before = await snapshot(db.sql, forA);
				expect(await call(caller, c, forA), `${c.fn} as ${caller.name}`).toMatch(/^error (42501|PT404)$/);
				expect(await snapshot(db.sql, forA)).toEqual(before);
			}
			expect(await call(callers.owner, c, forA)).not.toMatch(/^error/);
			const [{ n }] =
				await db.sql`select count(*)::int as n from jobs where kind = ${forA.kind} and owner_id = ${a.sub}`;
			expect(n).toBe(1);
		});
	}
});
