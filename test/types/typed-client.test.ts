/**
 * The generated types in use: a supabase-js client typed with the package's
 * JobsDatabase calls the job functions with checked arguments and gets typed
 * rows back, and supabaseAdapter takes that typed client as it is.
 * (`npm run check` type-checks this file; here it also runs.)
 */
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { JobStore, supabaseAdapter, type JobsDatabase } from '../../src/lib/index.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { createUser, useTestDatabase } from '../helpers/db.ts';
import { JWT_SECRET } from '../standin/helpers.ts';

let standin: Standin;
let token: string;

beforeAll(async () => {
	const db = await useTestDatabase();
	standin = await createStandin({ databaseUrl: db.url, jwtSecret: JWT_SECRET });
	token = await standin.mintUserToken((await createUser(db.sql)).sub);
});

afterAll(async () => {
	await standin?.close();
});

const typedClient = () =>
	createClient<JobsDatabase>(standin.url, standin.anonKey, {
		realtime: { transport: WebSocket as never },
		auth: { persistSession: false, autoRefreshToken: false },
		accessToken: async () => token,
	});

describe('a supabase-js client typed with JobsDatabase', () => {
	it('rpc job_enqueue returns a job row typed from the migrations', async () => {
		const supabase = typedClient();
		const { data, error } = await supabase.rpc('job_enqueue', { kind: 'typed', params: { n: 1 } });
		expect(error).toBeNull();
		// Typed: status is the job_status enum, attempts a number (a typo in a column name would not compile).
		const row: JobsDatabase['supabase_jobs']['Tables']['job']['Row'] = data!;
		const status: JobsDatabase['public']['Enums']['job_status'] = row.status;
		expect(status).toBe('queued');
		expect(row.attempts).toBe(0);
		expect(row.kind).toBe('typed');
		await supabase.removeAllChannels();
	});

	it('supabaseAdapter takes the typed client and reads the same job', async () => {
		const supabase = typedClient();
		const store = new JobStore(supabaseAdapter(supabase, { realtime: false }));
		const job = await store.enqueue('typed', { params: { n: 2 } });
		const { data } = await supabase.rpc('job_get', { id: job.id });
		expect(data?.id).toBe(job.id);
		expect(data?.params).toEqual({ n: 2 });
		await supabase.removeAllChannels();
	});
});
