/**
 * The demo's "Sign in as admin", offered on the local stack only: there it
 * stores app_metadata.role = 'admin' on the visitor's user (as the Auth admin
 * API would) and hands back a token that says so, kept when the session is
 * refreshed; against a hosted project (GoTrue's sign-in, or a Supabase that is
 * not on this machine) the offer is absent from the page's data and the route
 * answers 404, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	decodeSession,
	isAdminSession,
	keepFresh,
	offersLocalAdmin,
	SESSION_COOKIE,
	signInAnonymously,
	signInAsLocalAdmin,
	type DemoSession,
} from '../../src/demo/app/session.server.ts';
import type { DemoConfig } from '../../src/demo/app/config.server.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { load as layoutLoad } from '../../src/routes/+layout.server.ts';
import { POST } from '../../src/routes/auth/local-admin/+server.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { JWT_SECRET } from '../standin/helpers.ts';

let db: TestDatabase;
let standin: Standin;
let local: DemoConfig;

beforeAll(async () => {
	db = await useTestDatabase();
	standin = await createStandin({ databaseUrl: db.url, jwtSecret: JWT_SECRET });
	local = {
		supabaseUrl: standin.url,
		anonKey: standin.anonKey,
		auth: { mode: 'standin', jwtSecret: JWT_SECRET, databaseUrl: db.url },
	};
});

afterAll(async () => {
	await standin?.close();
});

/** POST /auth/local-admin as SvelteKit calls it; the cookie it set, or what it threw. */
async function postLocalAdmin(config: DemoConfig, session: DemoSession) {
	const set = new Map<string, string>();
	const cookies = { set: (name: string, value: string) => set.set(name, value) };
	const event = { locals: { config, session, locale: 'en' }, cookies };
	try {
		await POST(event as unknown as Parameters<typeof POST>[0]);
		return { thrown: null, cookie: set.get(SESSION_COOKIE) };
	} catch (e) {
		return { thrown: e as { status: number; location?: string }, cookie: set.get(SESSION_COOKIE) };
	}
}

const roleOf = async (userId: string) =>
	(
		await db.sql<
			{ role: string | null }[]
		>`select raw_app_meta_data ->> 'role' as role from auth.users where id = ${userId}`
	)[0]?.role ?? null;

describe('sign in as admin, on the local stack', () => {
	it('is offered where the server mints the tokens and its Supabase is on this machine, and nowhere else', () => {
		const standinAt = (url: string): DemoConfig => ({ ...local, supabaseUrl: url });
		expect(offersLocalAdmin(local)).toBe(true);
		expect(offersLocalAdmin(standinAt('http://localhost:5181'))).toBe(true);
		expect(offersLocalAdmin(standinAt('http://[::1]:5181'))).toBe(true);
		expect(offersLocalAdmin(standinAt('https://abcdefgh.supabase.co'))).toBe(false);
		expect(offersLocalAdmin(standinAt('http://127.example.com'))).toBe(false);
		expect(offersLocalAdmin({ ...local, auth: { mode: 'supabase' } })).toBe(false);
		expect(
			offersLocalAdmin({ supabaseUrl: 'https://abcdefgh.supabase.co', anonKey: 'k', auth: { mode: 'supabase' } }),
		).toBe(false);
	});

	it('makes the visitor an admin: role stored on their user, a token the admin check accepts, and /admin next', async () => {
		const visitor = await signInAnonymously(local);
		expect(await isAdminSession(local, visitor)).toBe(false);
		const { thrown, cookie } = await postLocalAdmin(local, visitor);
		expect(thrown).toMatchObject({ status: 303, location: '/admin' });
		const admin = decodeSession(cookie)!;
		expect(admin.userId).toBe(visitor.userId);
		expect(await isAdminSession(local, admin)).toBe(true);
		expect(await roleOf(visitor.userId)).toBe('admin');
	});

	it('an admin stays one when the session is refreshed', async () => {
		const admin = await signInAsLocalAdmin(local, await signInAnonymously(local));
		const refreshed = await keepFresh(local, { ...admin, expiresAt: Math.floor(Date.now() / 1000) });
		expect(refreshed!.accessToken).not.toBe(admin.accessToken);
		expect(await isAdminSession(local, refreshed!)).toBe(true);
	});

	it('the page data offers it locally', async () => {
		const visitor = await signInAnonymously(local);
		const data = (await layoutLoad({ locals: { config: local, session: visitor, locale: 'en' } } as never)) as {
			localAdmin: boolean;
		};
		expect(data.localAdmin).toBe(true);
	});
});

describe('sign in as admin, against a hosted project', () => {
	it('is absent from the page data, and the route answers 404 and changes nothing', async () => {
		const visitor = await signInAnonymously(local);
		for (const hosted of [
			{ ...local, supabaseUrl: 'https://abcdefgh.supabase.co' },
			{ ...local, auth: { mode: 'supabase' as const } },
		]) {
			const data = (await layoutLoad({ locals: { config: hosted, session: visitor, locale: 'en' } } as never)) as {
				localAdmin: boolean;
			};
			expect(data.localAdmin).toBe(false);
			const { thrown, cookie } = await postLocalAdmin(hosted, visitor);
			expect(thrown).toMatchObject({ status: 404 });
			expect(cookie).toBeUndefined();
			await expect(signInAsLocalAdmin(hosted, visitor)).rejects.toThrow(/local stack only/);
		}
		expect(await roleOf(visitor.userId)).toBeNull();
	});
});
