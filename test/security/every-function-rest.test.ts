/**
 * The security matrix over REST: the same cases as every-function.test.ts,
 * called with supabase-js through the stand-in (PostgREST's role switch from
 * the JWT, a custom role included): every caller but the owner gets exactly
 * what a missing job gives, and nothing changes; admin actions refuse every
 * user; an enqueue is for the caller only.
 */
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/local/standin/jwt.ts';
import { createUser } from '../helpers/db.ts';
import { client, JWT_SECRET, useStandin } from '../standin/helpers.ts';
import { jobIn, snapshot } from './fixtures.ts';
import { CASES, createCustomRole, missingTarget, RECORDS_SQL, type Case, type Target } from './matrix.ts';

const f = await useStandin(RECORDS_SQL);
interface RestCaller {
	name: string;
	supabase: SupabaseClient;
}
let owner: RestCaller & { sub: string };
let others: RestCaller[];
let admin: RestCaller;
let drop: () => Promise<void>;

beforeAll(async () => {
	const custom = await createCustomRole(f.db.sql);
	drop = custom.drop;
	const user = async (name: string, options?: Parameters<typeof f.standin.mintUserToken>[1]) => {
		const { sub } = await createUser(f.db.sql);
		return { name, sub, supabase: client(f, await f.standin.mintUserToken(sub, options)) };
	};
	const now = Math.floor(Date.now() / 1000);
	const noSub = await signToken(JWT_SECRET, { role: 'authenticated', aud: 'authenticated', iat: now, exp: now + 3600 });
	owner = await user('user A (owner)');
	others = [
		await user('user B'),
		{ name: 'anon', supabase: client(f) },
		{ name: 'a JWT without sub', supabase: client(f, noSub) },
		await user(`custom role ${custom.role}`, { role: custom.role }),
	];
	admin = await user('an admin', { claims: { app_metadata: { provider: 'email', role: 'admin' } } });
});
afterAll(async () => {
	await drop?.();
});

async function call(caller: RestCaller, c: Case, t: Target): Promise<string> {
	const { data, error } = await caller.supabase.rpc(c.fn, c.rpc(t));
	if (error) return `error ${error.code}`;
	return `rows ${JSON.stringify(data).replaceAll(t.id, 'ID').replaceAll(t.kind, 'KIND')}`;
}

async function refusedAsMissing(caller: RestCaller, c: Case, t: Target) {
	const before = await snapshot(f.db.sql, t);
	const real = await call(caller, c, t);
	expect(real, `${c.fn} as ${caller.name} on ${t.owner ? "A's" : 'an ownerless'} job`).toBe(
		await call(caller, c, missingTarget(t.owner)),
	);
	expect(await snapshot(f.db.sql, t), `${c.fn} as ${caller.name} changed something`).toEqual(before);
}

describe('over REST, the five callers reach the database', () => {
	it('B, a JWT without sub and the custom role are let in (their requests run, as their role), anon as anon', async () => {
		for (const caller of others) {
			const { error } = await caller.supabase.rpc('job_list_recent', {});
			expect(error?.code ?? null, caller.name).toBe(caller.name === 'anon' ? '42501' : null);
		}
	});
});

describe('over REST, only the owner acts on a job; every other caller gets what a missing job gives', () => {
	for (const c of CASES.filter((x) => x.scope === 'job' || x.scope === 'record')) {
		it(`${c.fn}: B, anon, a JWT without sub and a custom role see A's job as missing; nobody acts on an ownerless one`, async () => {
			const mine = await jobIn(f.db.sql, c, owner.sub);
			for (const caller of others) await refusedAsMissing(caller, c, mine);
			const ownerless = await jobIn(f.db.sql, c, null);
			for (const caller of [owner, ...others]) await refusedAsMissing(caller, c, ownerless);
			const own = await call(owner, c, mine);
			expect(own, `${c.fn} as the owner`).not.toMatch(/^error/);
			if (c.ownerSees) expect(own).not.toBe(await call(owner, c, missingTarget(owner.sub)));
		});
	}
});

describe('over REST, admin actions are refused to every user (42501), nothing changed; an admin acts', () => {
	for (const c of CASES.filter((x) => x.scope === 'admin')) {
		it(`${c.fn}: A, B, anon, a JWT without sub and a custom role are refused; an admin is not`, async () => {
			const mine = await jobIn(f.db.sql, c, owner.sub);
			for (const caller of [owner, ...others]) {
				const before = await snapshot(f.db.sql, mine);
				expect(await call(caller, c, mine), `${c.fn} as ${caller.name}`).toBe('error 42501');
				expect(await snapshot(f.db.sql, mine)).toEqual(before);
			}
			expect(await call(admin, c, mine)).not.toMatch(/^error/);
		});
	}
});

describe('over REST, an enqueue is for the caller only', () => {
	for (const c of CASES.filter((x) => x.scope === 'enqueue')) {
		it(`${c.fn}: nobody but A enqueues a job owned by A, and nothing is queued when refused`, async () => {
			const forA = missingTarget(owner.sub);
			for (const caller of others) {
				const before = await snapshot(f.db.sql, forA);
				expect(await call(caller, c, forA), `${c.fn} as ${caller.name}`).toMatch(/^error (42501|PT404)$/);
				expect(await snapshot(f.db.sql, forA)).toEqual(before);
			}
			expect(await call(owner, c, forA)).not.toMatch(/^error/);
			const [{ n }] = await f.db
				.sql`select count(*)::int as n from jobs where kind = ${forA.kind} and owner_id = ${owner.sub}`;
			expect(n).toBe(1);
		});
	}
});
