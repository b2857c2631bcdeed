/**
 * Who may hear what: the Realtime Authorization policy (topic policy
 * supabase_jobs_read_job_topics) as enforced by the stand-in (the
 * upstream probe on realtime.messages), REST visibility through RLS, and the
 * contents of every frame at the socket level.
 */
import { randomUUID } from 'node:crypto';
import type { RealtimeChannel } from '@supabase/supabase-js';
import { describe, expect, test } from 'vitest';
import { JobNotFoundError } from '../../src/lib/errors.ts';
import { deliveredSoFar, frames, realtimeStatuses, recordingTransport, useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();

/** The columns every broadcast carries. */
const ALWAYS_COLUMNS = [
	'attempts',
	'available_at',
	'created_at',
	'id',
	'job_table',
	'kind',
	'max_attempts',
	'progress',
	'status',
	'updated_at',
];
/** The columns a broadcast carries when set, and nothing else (no owner_id, locale, params, payload). */
const SET_COLUMNS = [
	'error',
	'error_code',
	'expected_end_at',
	'finished_at',
	'heartbeat_ms',
	'metadata',
	'parent_id',
	'result_id',
	'stage',
	'started_at',
	'tags',
];

/** A broadcast's keys: every always-sent column, and the others only among those a screen reads. */
function expectScreenColumns(payload: Record<string, unknown>): void {
	const keys = Object.keys(payload);
	expect(keys.filter((k) => !ALWAYS_COLUMNS.includes(k) && !SET_COLUMNS.includes(k))).toEqual([]);
	expect(ALWAYS_COLUMNS.filter((k) => !keys.includes(k))).toEqual([]);
}

function join(channel: RealtimeChannel): Promise<{ status: string; err?: Error }> {
	return new Promise((resolve) =>
		channel.subscribe((status, err) => {
			if (status !== 'CLOSED') resolve({ status, err });
		}),
	);
}

/** Runs a job of `ownerId` from enqueue to done through the worker, ticking twice. */
async function runJob(
	ownerId: string,
	kind: string,
	input: { params?: Record<string, unknown>; payload?: string } = {},
) {
	const job = await f.worker.enqueue(kind, { ...input, ownerId });
	const claimed = (await f.worker.claim(job.id))!;
	await f.worker.tick(job.id, { progress: 30, stage: 'table', attempt: claimed.attempts });
	await f.worker.tick(job.id, { progress: 70, stage: 'reading', attempt: claimed.attempts });
	await f.worker.succeed(job.id, { attempt: claimed.attempts });
	return job;
}

describe('Realtime authorization of job topics', () => {
	test("user B cannot join user A's job topic or A's list topic (join refused); B joins their own list topic, where their jobs speak, and no job topic", async () => {
		const a = await f.user();
		const b = await f.user();
		const job = await a.store.enqueue('private');
		const own = await b.store.enqueue('mine');

		const theirs = await join(b.supabase.channel(`job:${job.id}`, { config: { private: true } }));
		expect(theirs.status).toBe('CHANNEL_ERROR');
		expect(theirs.err?.message).toBe(
			`Unauthorized: You do not have permissions to read from this Channel topic: job:${job.id}`,
		);
		const theirList = await join(b.supabase.channel(`jobs:${a.id}`, { config: { private: true } }));
		expect(theirList.status).toBe('CHANNEL_ERROR');

		expect((await join(b.supabase.channel(`job:${own.id}`, { config: { private: true } }))).status).toBe(
			'CHANNEL_ERROR',
		);
		expect((await join(b.supabase.channel(`jobs:${b.id}`, { config: { private: true } }))).status).toBe('SUBSCRIBED');
		await b.supabase.removeAllChannels();
	});

	test("user B cannot see A's job through REST: job_get answers 404 and a table select returns no rows", async () => {
		const a = await f.user();
		const b = await f.user();
		const job = await a.store.enqueue('private');

		await expect(b.store.get(job.id)).rejects.toBeInstanceOf(JobNotFoundError);
		const rpc = await b.supabase.rpc('job_get', { id: job.id });
		expect(rpc.status).toBe(404);
		expect(rpc.error?.code).toBe('PT404');
		const select = await b.supabase.from('jobs').select('*').eq('id', job.id);
		expect(select.error).toBeNull();
		expect(select.data).toEqual([]);
		// A sees it both ways (the checks above could not pass by being broken).
		expect((await a.supabase.from('jobs').select('id').eq('id', job.id)).data).toEqual([{ id: job.id }]);

		const rt = realtimeStatuses();
		await expect(
			(async () => {
				for await (const j of b.store.watch(job.id, { onRealtime: rt.onRealtime })) void j;
			})(),
		).rejects.toBeInstanceOf(JobNotFoundError);
		expect(rt.seen).toEqual([]);
		expect(b.supabase.getChannels()).toEqual([]);
	});

	test("user B never receives A's broadcasts, whatever B joins", async () => {
		const a = await f.user();
		const recording = recordingTransport();
		const b = await f.user();
		const bSocket = await f.connect({ sub: b.id }, { transport: recording.transport });
		const kind = `a-secret-${randomUUID().slice(0, 8)}`;
		const aJob = await f.worker.enqueue(kind, { ownerId: a.id });

		const heard: unknown[] = [];
		// B's own topics, and A's job topic as a PUBLIC channel (no authorization needed to join it).
		const channels = [
			bSocket.channel(`jobs:${b.id}`, { config: { private: true } }),
			bSocket.channel(`job:${aJob.id}`),
		];
		for (const ch of channels) {
			ch.on('broadcast', { event: 'job' }, (m) => {
				if ((m.payload as { status?: string }).status === 'done') heard.push(m);
			});
			expect((await join(ch)).status).toBe('SUBSCRIBED');
		}
		const claimed = (await f.worker.claim(aJob.id))!;
		await f.worker.tick(aJob.id, { progress: 50, stage: 'table', attempt: claimed.attempts });
		await f.worker.succeed(aJob.id, { attempt: claimed.attempts });
		await runJob(a.id, kind);
		// A positive control on the same socket: B hears B's own job.
		const bJob = await runJob(b.id, 'b-own');
		await deliveredSoFar(f, bSocket);

		expect(heard.length).toBeGreaterThan(0);
		// Only B's own job (no owner_id is sent: B's topic jobs:<b> carries only B's jobs).
		expect(heard.every((m) => (m as { payload: { id: string } }).payload.id === bJob.id)).toBe(true);
		expect(heard.some((m) => (m as { payload: { id: string } }).payload.id === bJob.id)).toBe(true);
		expect(recording.frames.filter((frame) => frame.includes(kind))).toEqual([]);
		await bSocket.removeAllChannels();
	});

	test('anon receives nothing: private joins are refused and public channels of job topics stay silent', async () => {
		const a = await f.user();
		const recording = recordingTransport();
		const anon = await f.connect('anon', { transport: recording.transport });
		const kind = `anon-secret-${randomUUID().slice(0, 8)}`;
		const job = await f.worker.enqueue(kind, { ownerId: a.id });

		for (const topic of [`job:${job.id}`, `jobs:${a.id}`]) {
			const refused = anon.channel(topic, { config: { private: true } });
			expect((await join(refused)).status).toBe('CHANNEL_ERROR');
			// realtime-js hands back the same channel object for a topic: leave it before joining again.
			await anon.removeChannel(refused);
		}
		const heard: unknown[] = [];
		for (const topic of [`job:${job.id}`, `jobs:${a.id}`]) {
			const ch = anon.channel(topic);
			ch.on('broadcast', { event: 'job' }, (m) => {
				if ((m.payload as { status?: string }).status === 'done') heard.push(m);
			});
			expect((await join(ch)).status).toBe('SUBSCRIBED');
		}
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await deliveredSoFar(f, anon);

		expect(heard).toEqual([]);
		expect(recording.frames.filter((frame) => frame.includes(kind))).toEqual([]);
		await anon.removeAllChannels();
	});

	test('payload and params never appear in any Realtime frame, not even to the owner', async () => {
		const recording = recordingTransport();
		const a = await f.user();
		const owner = await f.connect({ sub: a.id }, { transport: recording.transport });
		const secretParams = `PARAMS-${randomUUID()}`;
		const secretPayload = `PAYLOAD-${randomUUID()}`;
		const payloadHex = Buffer.from(secretPayload, 'utf8').toString('hex');

		const list = owner.channel(`jobs:${a.id}`, { config: { private: true } });
		const messages = frames<Record<string, unknown>>();
		list.on('broadcast', { event: 'job' }, (m) => messages.push(m.payload as Record<string, unknown>));
		expect((await join(list)).status).toBe('SUBSCRIBED');

		const job = await f.worker.enqueue('extract', {
			ownerId: a.id,
			params: { filename: 'tender.pdf', secret: secretParams },
			payload: secretPayload,
		});
		const claimed = (await f.worker.claim(job.id))!;
		expect(claimed.payload).not.toBeNull(); // the payload is there to leak
		await f.worker.tick(job.id, { progress: 50, stage: 'table', attempt: claimed.attempts });
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await messages.until(4); // queued, running, 50 %, done
		await deliveredSoFar(f, owner);

		expect(messages.got.map((m) => m.status)).toEqual(['queued', 'running', 'running', 'done']);
		for (const m of messages.got) expectScreenColumns(m);
		const mentioning = recording.frames.filter((frame) => frame.includes(job.id));
		expect(mentioning.length).toBeGreaterThanOrEqual(4); // the frames were captured
		for (const secret of [secretParams, secretPayload, payloadHex, 'tender.pdf'])
			expect(recording.frames.filter((frame) => frame.includes(secret))).toEqual([]);
		// ...nor in what the database stored for Realtime to send.
		const stored = await f.db.sql<{ payload: Record<string, unknown> }[]>`
			select payload from realtime.messages where topic in (${`job:${job.id}`}, ${`jobs:${a.id}`}) and extension = 'broadcast'`;
		expect(stored.length).toBe(4); // one per change (queued, running, 50 %, done), on the list topic only
		for (const row of stored) expectScreenColumns(row.payload);
		await owner.removeAllChannels();
	});
});

describe('a question a job asks its owner', () => {
	test("asking is one message on the owner's topic (status waiting) and the question itself never travels over Realtime; user B can neither read nor answer it, nor try the job again", async () => {
		const recording = recordingTransport();
		const a = await f.user();
		const b = await f.user();
		const owner = await f.connect({ sub: a.id }, { transport: recording.transport });
		const list = owner.channel(`jobs:${a.id}`, { config: { private: true } });
		const messages = frames<Record<string, unknown>>();
		list.on('broadcast', { event: 'job' }, (m) => messages.push(m.payload as Record<string, unknown>));
		expect((await join(list)).status).toBe('SUBSCRIBED');

		const prompt = `PROMPT-${randomUUID()}`;
		const job = await f.worker.enqueue('asks', { ownerId: a.id });
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.ask(job.id, { key: 'ask-1', prompt, schema: { type: 'boolean' }, attempt: claimed.attempts });
		await messages.until(3); // queued, running, waiting
		expect(messages.got.map((m) => m.status)).toEqual(['queued', 'running', 'waiting']);
		expect(recording.frames.filter((frame) => frame.includes(prompt))).toEqual([]);

		// B: no row through REST (the RPC, the table), a refused answer and try again; A reads it.
		expect(await b.store.question(job.id)).toBeNull();
		const select = await b.supabase
			.schema('supabase_jobs' as never)
			.from('job_question')
			.select('*');
		expect(select.data ?? []).toEqual([]);
		const answer = await b.supabase.rpc('job_answer', { id: job.id, answer: true });
		expect(answer.error?.code).toBe('PT404');
		expect((await a.store.question(job.id))?.prompt).toBe(prompt);
		await f.worker.cancel(job.id);
		expect((await b.supabase.rpc('job_try_again', { id: job.id })).error?.code).toBe('PT404');
		expect((await b.supabase.rpc('job_replay', { kind: 'asks' })).error?.code).toBe('42501');
		await owner.removeAllChannels();
	});
});

describe("a child's changes on its owner's topic", () => {
	test("reach the parent's owner on jobs:<owner> with the screen columns and parent_id, never params or payload; another user cannot join", async () => {
		const recording = recordingTransport();
		const a = await f.user();
		const b = await f.user();
		const owner = await f.connect({ sub: a.id }, { transport: recording.transport });
		const parent = await f.worker.enqueue('book', { ownerId: a.id });
		await f.worker.claim(parent.id);
		const topic = owner.channel(`jobs:${a.id}`, { config: { private: true } });
		const messages = frames<Record<string, unknown>>();
		// The parent's own changes go by on this topic too: keep its children's.
		topic.on('broadcast', { event: 'job' }, (m) => {
			const payload = m.payload as Record<string, unknown>;
			if (payload.parent_id !== undefined) messages.push(payload);
		});
		expect((await join(topic)).status).toBe('SUBSCRIBED');
		expect((await join(b.supabase.channel(`jobs:${a.id}`, { config: { private: true } }))).status).toBe(
			'CHANNEL_ERROR',
		);

		const secret = `PARAMS-${randomUUID()}`;
		const child = await f.worker.enqueueChild(parent.id, 'page', { params: { secret }, payload: secret });
		const claimed = (await f.worker.claim(child.id))!;
		await f.worker.tick(child.id, { progress: 50, attempt: claimed.attempts });
		await f.worker.succeed(child.id, { attempt: claimed.attempts });
		const heard = () => messages.got.filter((m) => m.id === child.id);
		await messages.until(4); // queued, running, 50 %, done
		await deliveredSoFar(f, owner);

		expect(heard().map((m) => m.status)).toEqual(['queued', 'running', 'running', 'done']);
		for (const m of heard()) {
			expectScreenColumns(m);
			expect(m.parent_id).toBe(parent.id);
		}
		expect(recording.frames.filter((frame) => frame.includes(secret))).toEqual([]);
		await owner.removeAllChannels();
		await b.supabase.removeAllChannels();
	});
});

describe('what a user may not do on job topics', () => {
	test('nobody broadcasts on a job topic from a client: no write policy, so a forged progress is refused', async () => {
		const a = await f.user();
		const job = await a.store.enqueue('forgery');
		const watcher = await f.connect({ sub: a.id });
		// The job's own messages (its insert) go by on this topic: only a 'done' could be the forgery.
		const heard: unknown[] = [];
		const ch = watcher.channel(`jobs:${a.id}`, { config: { private: true, broadcast: { ack: true, self: true } } });
		ch.on('broadcast', { event: 'job' }, (m) => {
			if ((m.payload as { status?: string }).status === 'done') heard.push(m);
		});
		expect((await join(ch)).status).toBe('SUBSCRIBED');
		const sent = await ch.send(
			{ type: 'broadcast', event: 'job', payload: { id: job.id, status: 'done', progress: 100 } },
			{ timeout: 1000 },
		);
		await deliveredSoFar(f, watcher);
		expect(sent).not.toBe('ok');
		expect(heard).toEqual([]);
		await watcher.removeAllChannels();
	});
});

describe("a job's streamed output and metadata", () => {
	test("user B can neither read A's stream over REST nor receive it over Realtime; A receives each chunk, and the metadata in the tick's own message", async () => {
		const a = await f.user();
		const b = await f.user();
		const aRecording = recordingTransport();
		const bRecording = recordingTransport();
		const aSocket = await f.connect({ sub: a.id }, { transport: aRecording.transport });
		const bSocket = await f.connect({ sub: b.id }, { transport: bRecording.transport });
		const secret = `SUMMARY-${randomUUID()}`;
		const job = await f.worker.enqueue('summary', { ownerId: a.id });

		const chunks = frames<Record<string, unknown>>();
		const changes = frames<Record<string, unknown>>();
		const aList = aSocket.channel(`jobs:${a.id}`, { config: { private: true } });
		aList.on('broadcast', { event: 'job_stream' }, (m) => chunks.push(m.payload as Record<string, unknown>));
		aList.on('broadcast', { event: 'job' }, (m) => changes.push(m.payload as Record<string, unknown>));
		expect((await join(aList)).status).toBe('SUBSCRIBED');
		// B: its own list topic, and A's job topic as a public channel (no authorization needed to join it).
		const bHeard: unknown[] = [];
		for (const ch of [
			bSocket.channel(`jobs:${b.id}`, { config: { private: true } }),
			bSocket.channel(`job:${job.id}`),
		]) {
			ch.on('broadcast', { event: 'job_stream' }, (m) => bHeard.push(m));
			expect((await join(ch)).status).toBe('SUBSCRIBED');
		}
		expect((await join(bSocket.channel(`jobs:${a.id}`, { config: { private: true } }))).status).toBe('CHANNEL_ERROR');

		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.appendStream(job.id, 'summary', `${secret} part one`, { attempt: claimed.attempts });
		await f.worker.tick(job.id, { progress: 40, metadata: { pages: 7 }, attempt: claimed.attempts });
		await f.worker.appendStream(job.id, 'summary', ' part two', { attempt: claimed.attempts });
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await chunks.until(2);
		await changes.until(3); // running, 40 % with metadata, done
		await deliveredSoFar(f, aSocket);
		await deliveredSoFar(f, bSocket);

		expect(chunks.got).toEqual([
			{ id: job.id, job_table: 'jobs', stream: 'summary', attempt: 1, seq: 0, text: `${secret} part one` },
			{ id: job.id, job_table: 'jobs', stream: 'summary', attempt: 1, seq: 1, text: ' part two' },
		]);
		const tick = changes.got.find((m) => m.id === job.id && m.progress === 40);
		expect(tick?.metadata).toEqual({ pages: 7 });
		expect(aRecording.frames.filter((frame) => frame.includes(secret)).length).toBe(1); // the capture works
		expect(bHeard).toEqual([]);
		expect(bRecording.frames.filter((frame) => frame.includes(secret) || frame.includes('pages'))).toEqual([]);

		// REST: B's read answers 404, as for a job B cannot see; A reads it.
		await expect(b.store.readStreams(job.id)).rejects.toBeInstanceOf(JobNotFoundError);
		const rpc = await b.supabase.rpc('job_stream_read', { id: job.id });
		expect(rpc.status).toBe(404);
		expect(rpc.error?.code).toBe('PT404');
		expect(JSON.stringify(rpc)).not.toContain(secret);
		expect((await a.store.readStreams(job.id)).chunks.map((c) => c.text).join('')).toBe(`${secret} part one part two`);
		// Nor may B (or A) write one: the append is the worker's.
		const forged = await b.supabase.rpc('job_stream_append', { id: job.id, stream: 'summary', body: 'forged' });
		expect(forged.error?.code).toBe('42501');
		await aSocket.removeAllChannels();
		await bSocket.removeAllChannels();
	});
});
