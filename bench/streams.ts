/**
 * Streamed output over the local stack (embedded PostgreSQL + the stand-in's
 * REST and Realtime, the watcher on supabase-js, the worker on postgres.js):
 *
 * - chunk written -> chunk in the watcher's callback, p50/p95: a producer
 *   writes CHUNKS tokens at TOKEN_MS apart through the worker's coalescing
 *   writer (ctx.stream), and the watcher (store.watchStreams over Realtime)
 *   notes when each token's text arrived; also with one append per token
 *   (store.appendStream, no coalescing) for comparison;
 * - Realtime messages per 1,000 chunks written (the job_stream rows in
 *   realtime.messages);
 * - a late watcher's catch-up for a 1 MB stream: from watchStreams() to the
 *   whole megabyte in hand, the job still running.
 *
 * Usage: npm run bench:streams. Env: STREAM_CHUNKS (default 1000),
 * STREAM_TOKEN_MS (default 5), STREAM_CATCHUP_RUNS (default 5).
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@supabase/supabase-js';
import postgres from 'postgres';
import WebSocket from 'ws';
import { postgresAdapter } from '../src/lib/adapters/postgres.ts';
import { supabaseAdapter } from '../src/lib/adapters/supabase.ts';
import { JobStore } from '../src/lib/store/job-store.ts';
import { JobOutput, STREAM_FLUSH_MS } from '../src/lib/worker/job-output.ts';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { prepareDatabase, withDatabase } from '../src/local/postgres/migrate.ts';
import { createStandin } from '../src/local/standin/server.ts';
import { median, percentile } from './stats.ts';

const CHUNKS = Number(process.env.STREAM_CHUNKS ?? 1000);
const TOKEN_MS = Number(process.env.STREAM_TOKEN_MS ?? 5);
const CATCHUP_RUNS = Number(process.env.STREAM_CATCHUP_RUNS ?? 5);
const JWT_SECRET = 'bench-only-jwt-secret-with-at-least-32-characters';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
	const pg = await startLocalPostgres();
	const url = withDatabase(pg.url, `streams_${randomUUID().slice(0, 8)}`);
	const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
	await admin.unsafe(`create database ${new URL(url).pathname.slice(1)}`);
	await admin.end();
	await prepareDatabase(url, { demo: false });
	const sql = postgres(url, { max: 4, onnotice: () => {} });
	const standin = await createStandin({ databaseUrl: url, jwtSecret: JWT_SECRET });
	const sub = randomUUID();
	await sql`insert into auth.users (id, email, role, aud) values (${sub}, ${`${sub}@bench.test`}, 'authenticated', 'authenticated')`;
	const token = await standin.mintUserToken(sub);
	const client = createClient(standin.url, standin.anonKey, {
		realtime: { transport: WebSocket as never },
		auth: { persistSession: false, autoRefreshToken: false },
		accessToken: async () => token,
	});
	const user = new JobStore(supabaseAdapter(client));
	const worker = new JobStore(postgresAdapter(sql));

	const running = async () => {
		const job = await worker.enqueue('bench.stream', { ownerId: sub });
		const claimed = (await worker.claim(job.id))!;
		return claimed;
	};

	/** Writes CHUNKS tokens through `write`, paced; the watcher's arrival time per token. */
	const latency = async (
		label: string,
		write: (jobId: string, attempt: number, token: string) => Promise<void> | void,
		flush: () => Promise<void>,
	) => {
		const job = await running();
		const ends: number[] = [];
		const writtenAt: number[] = [];
		const arrivedAt: number[] = [];
		let received = 0;
		let next = 0;
		const controller = new AbortController();
		let joined!: () => void;
		const live = new Promise<void>((resolve) => (joined = resolve));
		const watching = (async () => {
			for await (const batch of user.watchStreams(job.id, { signal: controller.signal })) {
				joined();
				const at = performance.now();
				for (const chunk of batch) received += chunk.text.length;
				while (next < ends.length && ends[next]! <= received) arrivedAt[next++] = at;
				if (next === CHUNKS) break;
			}
		})();
		await live;
		// Let the topic join before writing (the first batch comes from the read, before the join).
		await pause(500);
		let offset = 0;
		for (let i = 0; i < CHUNKS; i++) {
			const text = `tok${i} `;
			offset += text.length;
			ends.push(offset);
			writtenAt.push(performance.now());
			await write(job.id, job.attempts, text);
			await pause(TOKEN_MS);
		}
		await flush();
		await watching;
		controller.abort();
		const ms = arrivedAt.map((t, i) => t - writtenAt[i]!);
		const [{ messages }] = await sql<{ messages: number }[]>`
			select count(*)::int as messages from realtime.messages
			 where event = 'job_stream' and topic = ${`jobs:${sub}`} and payload ->> 'id' = ${job.id}`;
		await worker.succeed(job.id, { attempt: job.attempts });
		console.log(
			`[figures] streams ${label}: ${CHUNKS} chunks at ${TOKEN_MS} ms: written -> in the watcher p50 ` +
				`${median(ms).toFixed(0)} ms, p95 ${percentile(ms, 95).toFixed(0)} ms; ` +
				`${((messages * 1000) / CHUNKS).toFixed(1)} Realtime messages per 1,000 chunks`,
		);
	};

	// Coalesced: the writer a handler gets from ctx.stream().
	let output: JobOutput | null = null;
	await latency(
		`coalesced (ctx.stream, ${STREAM_FLUSH_MS} ms)`,
		(jobId, attempt, text) => {
			output ??= new JobOutput((stream, body) => worker.appendStream(jobId, stream, body, { attempt }), {
				flushMs: STREAM_FLUSH_MS,
				signal: () => new AbortController().signal,
			});
			output.stream('summary').write(text);
		},
		async () => {
			await output!.flush();
			output = null;
		},
	);
	// One append per token, for comparison.
	await latency(
		'one append per chunk (store.appendStream)',
		async (jobId, attempt, text) => {
			await worker.appendStream(jobId, 'summary', text, { attempt });
		},
		async () => {},
	);

	// A late watcher, 1 MB already written.
	const catchup: number[] = [];
	const MB = 1_000_000;
	for (let run = 0; run < CATCHUP_RUNS; run++) {
		const job = await running();
		const writer = new JobOutput(
			(stream, body) => worker.appendStream(job.id, stream, body, { attempt: job.attempts }),
			{
				flushMs: STREAM_FLUSH_MS,
				signal: () => new AbortController().signal,
			},
		);
		const token = 'word '.repeat(200); // 1,000 characters
		for (let i = 0; i < MB / token.length; i++) writer.stream('summary').write(token);
		await writer.flush();
		const started = performance.now();
		let have = 0;
		const controller = new AbortController();
		for await (const batch of user.watchStreams(job.id, { signal: controller.signal })) {
			for (const chunk of batch) have += chunk.text.length;
			if (have >= MB) break;
		}
		catchup.push(performance.now() - started);
		controller.abort();
		await worker.succeed(job.id, { attempt: job.attempts });
	}
	console.log(
		`[figures] streams late watcher: catch-up of a 1 MB stream (watchStreams -> all of it in hand) ` +
			`median ${median(catchup).toFixed(0)} ms, max ${Math.max(...catchup).toFixed(0)} ms over ` +
			`${CATCHUP_RUNS} runs`,
	);

	await client.removeAllChannels();
	await standin.close();
	await sql.end();
	await pg.stop();
}

await main();
