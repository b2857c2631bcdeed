/**
 * RSS of a process watching WATCHES jobs over Realtime: the local stand-in for
 * REST + Realtime (src/local/standin) runs in this process over a database of
 * its own (its NOTIFY trigger on realtime.messages must not tax the other
 * measurements), a user in auth.users owns WATCHES + 1 queued jobs, and
 * bench/realtime-watch-child.ts watches them through supabase-js in a fresh
 * Node process.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { createStandin } from '../src/local/standin/server.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const JWT_SECRET = 'bench-only-jwt-secret-with-at-least-32-characters';

export interface RealtimeWatchMemory {
	watches: number;
	joinMs: number;
	live: number;
	rssDeltaMb: number;
	heapDeltaMb: number;
	rssMb: number;
}

/** `url`: a migrated supabase-jobs database used by nothing else. */
export async function realtimeWatchMemory(url: string, watches: number): Promise<RealtimeWatchMemory> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	const standin = await createStandin({ databaseUrl: url, jwtSecret: JWT_SECRET });
	const dir = await mkdtemp(join(os.tmpdir(), 'supabase-jobs-bench-'));
	try {
		const sub = randomUUID();
		await sql`insert into auth.users (id, email, role, aud) values (${sub}, ${`${sub}@bench.test`}, 'authenticated', 'authenticated')`;
		const rows = await sql<{ id: string }[]>`select (j).id from (
			select public.job_enqueue(kind => 'watched', owner_id => ${sub}::uuid) as j from generate_series(1, ${watches + 1})) t`;
		const file = join(dir, 'ids.json');
		await writeFile(file, JSON.stringify(rows.map((r) => r.id)));
		const child = spawn(
			process.execPath,
			['--expose-gc', '--import', join(here, 'ts-loader.mjs'), join(here, 'realtime-watch-child.ts')],
			{
				cwd: root,
				env: {
					...process.env,
					BENCH_STANDIN_URL: standin.url,
					BENCH_ANON_KEY: standin.anonKey,
					BENCH_USER_TOKEN: await standin.mintUserToken(sub),
					BENCH_IDS_FILE: file,
				},
				stdio: ['ignore', 'pipe', 'inherit'],
			},
		);
		let stdout = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
		if (code !== 0) throw new Error(`realtime-watch-child exited with ${code}`);
		return JSON.parse(stdout.trim().split('\n').pop()!) as RealtimeWatchMemory;
	} finally {
		await standin.close();
		await sql.end();
		await rm(dir, { recursive: true, force: true });
	}
}
