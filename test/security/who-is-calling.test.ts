/**
 * Who is calling, decided once and by privilege: a role RLS does not restrict
 * (the service role, a superuser, the table's owner) is a worker; everyone
 * else, a custom role inheriting authenticated included, is a user. No schema
 * file reads the role's name to decide it, and no SECURITY DEFINER function
 * asks it (inside one, current_user is the definer): job_answer asks as its
 * caller and sends a user to answer_question, whose owner check is always on.
 */
import { readdir, readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, claimsFor, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { asCaller, createCustomRole, type MatrixCaller } from './matrix.ts';

let db: TestDatabase;
let custom: Awaited<ReturnType<typeof createCustomRole>>;
beforeAll(async () => {
	db = await useTestDatabase();
	custom = await createCustomRole(db.sql);
});
afterAll(async () => {
	await custom?.drop();
});

/** Reading the calling role's name, the way a rule "by role name" would. */
const BY_ROLE_NAME = /current_setting\('role'|current_user\s+in|current_role\s*=|session_user\s*=/;
/** Asking who is calling at all: meaningless inside SECURITY DEFINER, where it answers for the definer. */
const ASKS_WHO =
	/\b(is_worker|caller_is_trusted|row_security_active)\s*\(|current_setting\s*\(\s*'role'|\bcurrent_user\b|\bsession_user\b/i;

/** A waiting job of `owner` (null: ownerless, as a worker or a schedule enqueues) with an open yes/no question. */
async function waitingJob(owner: string | null): Promise<string> {
	const [{ id }] = await db.sql`select id from job_enqueue(${`who.${randomUUID().slice(0, 8)}`}, owner_id => ${owner})`;
	await db.sql`select job_claim(${id})`;
	await db.sql`select job_ask(${id}, 'ask-1', 'Sure?', '{"type": "boolean"}')`;
	return id as string;
}

const state = async (id: string) =>
	(
		await db.sql`select j.status, q.answer, q.answered_at is not null as answered
		             from supabase_jobs.job j join supabase_jobs.job_question q on q.job_id = j.id where j.id = ${id}`
	)[0];

describe('who is calling is decided by privilege, once', () => {
	it('no schema file decides who is calling by the role name', async () => {
		const files = (await readdir('supabase/schemas')).filter((f) => f.endsWith('.sql'));
		expect(files.length).toBeGreaterThan(10);
		const found: string[] = [];
		for (const file of files) {
			const lines = (await readFile(`supabase/schemas/${file}`, 'utf8')).split('\n');
			lines.forEach((line, i) => BY_ROLE_NAME.test(line) && found.push(`${file}:${i + 1}`));
		}
		expect(found).toEqual([]);
		// The check sees the rule it forbids.
		expect(BY_ROLE_NAME.test("if current_setting('role') in ('authenticated', 'anon') then")).toBe(true);
	});

	it('no SECURITY DEFINER function asks who is calling: inside one the answer would be its owner', async () => {
		const definers = await db.sql<{ fn: string; src: string }[]>`
			select p.oid::regprocedure::text as fn, p.prosrc as src
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname in ('public', 'supabase_jobs') and p.prosecdef order by 1`;
		expect(definers.map((d) => d.fn)).toContain('supabase_jobs.answer_question(text,uuid,text,jsonb)');
		expect(definers.filter((d) => ASKS_WHO.test(d.src)).map((d) => d.fn)).toEqual([]);
		expect(ASKS_WHO.test('user_call boolean := not supabase_jobs.caller_is_trusted();')).toBe(true);
	});

	it('a worker answers an ownerless job as itself: the service role and the table owner queue it again', async () => {
		const byService = await waitingJob(null);
		await as(db.sql, serviceRole, (tx) => tx`select id from job_answer(${byService}, 'true'::jsonb)`);
		expect(await state(byService)).toEqual({ status: 'queued', answer: true, answered: true });
		const byOwner = await waitingJob(null);
		await db.sql`select id from job_answer(${byOwner}, 'false'::jsonb)`;
		expect(await state(byOwner)).toEqual({ status: 'queued', answer: false, answered: true });
	});

	it("a user's answer goes through the owner check: write_answer is not theirs to call, even for their own job", async () => {
		const a = await createUser(db.sql);
		const callers: MatrixCaller[] = [
			{ name: 'user A', role: 'authenticated', claims: claimsFor(a), sub: a.sub },
			{ name: 'a custom role', role: custom.role, claims: { ...claimsFor(a), role: custom.role }, sub: a.sub },
		];
		for (const caller of callers) {
			const id = await waitingJob(a.sub);
			const direct = await asCaller(
				db.sql,
				caller,
				(tx) => tx`select id from supabase_jobs.write_answer('jobs', ${id}, null, 'true'::jsonb, false)`,
			).catch((e: { code?: string }) => e.code);
			expect(direct, caller.name).toBe('42501');
			expect(await state(id)).toEqual({ status: 'waiting', answer: null, answered: false });
			// Through job_answer, the owner answers their own job.
			await asCaller(db.sql, caller, (tx) => tx`select id from job_answer(${id}, 'true'::jsonb)`);
			expect(await state(id), caller.name).toEqual({ status: 'queued', answer: true, answered: true });
		}
	});
});
