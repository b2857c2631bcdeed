/**
 * The package API: JobStore methods over both adapters (postgres.js as the
 * user and as the worker; supabase-js through the stand-in as the user) and
 * defineJobKind. Each bad call must throw the documented class with a stable
 * code, naming the field where there is one.
 */
import { z } from 'zod';
import { defineJobKind, isJobError, JobStore, type JobErrorCode } from '../../../src/lib/index.ts';
import { HOSTILE_STRINGS, NIL_UUID } from './hostile.ts';
import { describeInput, type Tally } from './tally.ts';

export interface ApiCase {
	name: string;
	call: () => unknown;
	/** The JobError code expected, or the plain error class for programmer mistakes. */
	expect: JobErrorCode | 'TypeError' | 'RangeError' | 'null';
	/** The `field` of an InvalidJobInputError. */
	field?: string;
	/** What the message must name. */
	names?: RegExp;
}

export async function runApiCase(boundary: string, c: ApiCase, tally: Tally): Promise<void> {
	tally.count(boundary);
	const started = performance.now();
	let result: unknown;
	let error: unknown;
	try {
		result = await c.call();
	} catch (e) {
		error = e;
	}
	if (process.env.BAD_INPUT_TIMES) console.log(`${boundary} ${c.name}: ${(performance.now() - started).toFixed(0)} ms`);
	if (c.expect === 'null') {
		if (error !== undefined || result !== null)
			tally.problem(boundary, c.name, `wanted null; got ${error ? String(error) : describeInput(result)}`);
		return;
	}
	if (error === undefined) {
		tally.problem(boundary, c.name, `accepted: ${describeInput(result)}`);
		return;
	}
	const e = error as { name?: string; code?: string; field?: string | null; message?: string };
	if (c.expect === 'TypeError' || c.expect === 'RangeError') {
		if (e.name !== c.expect) tally.problem(boundary, c.name, `${e.name} (wanted ${c.expect}): ${e.message}`);
	} else if (!isJobError(error) || e.code !== c.expect) {
		const cause = (error as { cause?: unknown }).cause;
		tally.problem(
			boundary,
			c.name,
			`${e.name} ${String(e.code)} (wanted JobError ${c.expect}): ${e.message}${cause ? ` (cause: ${String(cause)})` : ''}`,
		);
		return;
	}
	if (c.field !== undefined && e.field !== c.field)
		tally.problem(boundary, c.name, `field ${String(e.field)} (wanted ${c.field}): ${e.message}`);
	if (c.names && !c.names.test(e.message ?? ''))
		tally.problem(boundary, c.name, `message does not name ${String(c.names)}: ${e.message}`);
}

const documentKind = defineJobKind({
	name: 'chaos.known',
	params: z.object({ title: z.string().min(1).max(100), pages: z.array(z.number().int().positive()).max(10) }),
});

/** Calls a user may make wrongly (through either adapter). */
export function userCases(store: JobStore, ids: { ownJob: string; otherUsersJob: string }): ApiCase[] {
	const enq = (name: string, input: Record<string, unknown>, field: string, names = new RegExp(field)): ApiCase => ({
		name: `enqueue ${name}`,
		call: () => store.enqueue('chaos.known', input as never),
		expect: 'invalid_input',
		field,
		names,
	});
	const cases: ApiCase[] = [
		{
			name: 'enqueue an empty kind',
			call: () => store.enqueue(''),
			expect: 'invalid_input',
			field: 'kind',
			names: /kind/,
		},
		{
			name: 'enqueue an unregistered kind',
			call: () => store.enqueue('chaos.unknown'),
			expect: 'invalid_input',
			field: 'kind',
			names: /kind/,
		},
		enq('params as a string', { params: 'text' }, 'params'),
		enq('params as an array', { params: [1, 2] }, 'params'),
		enq('params over 64 KiB', { params: { text: 'x'.repeat(70_000) } }, 'params'),
		enq('a payload over 10 MiB', { payload: new Uint8Array(10 * 1024 * 1024 + 1) }, 'payload'),
		enq('maxAttempts 1.5', { maxAttempts: 1.5 }, 'maxAttempts'),
		enq('maxAttempts NaN', { maxAttempts: Number.NaN }, 'maxAttempts'),
		enq('maxAttempts 0', { maxAttempts: 0 }, 'maxAttempts'),
		enq('maxAttempts 1000', { maxAttempts: 1000 }, 'maxAttempts'),
		enq('a prose locale', { locale: 'portuguese please' }, 'locale'),
		enq('tags as a string', { tags: 'urgent' }, 'tags'),
		enq('tags of numbers', { tags: [1, 2] }, 'tags'),
		enq('an invalid runAt', { runAt: new Date('garbage') }, 'runAt'),
		enq('delayMs NaN', { delayMs: Number.NaN }, 'delayMs'),
		enq('priority 1.5', { priority: 1.5 }, 'priority'),
		enq('expireAfterMs -1', { expireAfterMs: -1 }, 'expireAfterMs'),
		enq('idempotencyTtlMs -1', { idempotencyKey: 'k', idempotencyTtlMs: -1 }, 'idempotencyTtlMs'),
		enq('an overlong idempotencyKey', { idempotencyKey: 'k'.repeat(10_000) }, 'idempotencyKey'),
		{
			name: 'enqueue for another user',
			call: () => store.enqueue('chaos.known', { ownerId: NIL_UUID }),
			expect: 'permission_denied',
			names: /of their own/,
		},
		{
			name: 'enqueue a declared kind with bad params',
			call: () => store.enqueue(documentKind, { params: { title: '', pages: [1, -2] } as never }),
			expect: 'invalid_input',
			field: 'title',
			names: /title/,
		},
		{
			name: 'enqueue a declared kind with a wrong type deep inside',
			call: () => store.enqueue(documentKind, { params: { title: 'x', pages: [1, 'two'] } as never }),
			expect: 'invalid_input',
			field: 'pages.1',
			names: /pages\.1/,
		},
		{
			name: 'enqueueMany with no items',
			call: () => store.enqueueMany('chaos.known', []),
			expect: 'invalid_input',
			field: 'items',
			names: /items/,
		},
		{
			name: 'enqueueMany with a bad item',
			call: () => store.enqueueMany('chaos.known', [{}, { params: 'x' as never }]),
			expect: 'invalid_input',
			field: 'items[1].params',
			names: /items\[1\]/,
		},
		{ name: 'get a non-UUID id', call: () => store.get('not-a-uuid'), expect: 'job_not_found', names: /not-a-uuid/ },
		{ name: "get another user's job", call: () => store.get(ids.otherUsersJob), expect: 'job_not_found' },
		{ name: 'get an unknown job', call: () => store.get(NIL_UUID), expect: 'job_not_found' },
		{ name: "cancel another user's job", call: () => store.cancel(ids.otherUsersJob), expect: 'null' },
		{ name: 'cancel a non-UUID id', call: () => store.cancel("'; drop table jobs; --"), expect: 'null' },
		{
			name: "reschedule another user's job",
			call: () => store.reschedule(ids.otherUsersJob, { delayMs: 1000 }),
			expect: 'job_not_found',
		},
		{
			name: 'listRecent limit 0',
			call: () => store.listRecent({ limit: 0 }),
			expect: 'invalid_input',
			field: 'limit',
			names: /limit/,
		},
		{
			name: 'listRecent limit 1.5',
			call: () => store.listRecent({ limit: 1.5 }),
			expect: 'invalid_input',
			field: 'limit',
			names: /limit/,
		},
		{
			name: 'listRecent an unknown status',
			call: () => store.listRecent({ status: 'finished' as never }),
			expect: 'invalid_input',
			field: 'status',
			names: /finished/,
		},
		{
			name: 'listRecent a garbage cursor',
			call: () => store.listRecent({ cursor: 'garbage' }),
			expect: 'invalid_input',
			field: 'cursor',
			names: /cursor/,
		},
		{ name: 'tick as a user', call: () => store.tick(ids.ownJob, { progress: 50 }), expect: 'permission_denied' },
		{ name: 'claim as a user', call: () => store.claim(ids.ownJob), expect: 'permission_denied' },
		{ name: 'fail as a user', call: () => store.fail(ids.ownJob, 'no'), expect: 'permission_denied' },
		{
			name: 'a job table that does not exist',
			call: () => new JobStore(store.adapter, { table: 'no_such_table' }).get(ids.ownJob),
			expect: 'unknown_job_table',
			names: /no_such_table/,
		},
	];
	for (const [label, kind] of Object.entries(HOSTILE_STRINGS)) {
		cases.push({
			name: `enqueue hostile kind ${label}`,
			call: () => store.enqueue(kind),
			expect: 'invalid_input',
			// NUL and a lone surrogate are refused as text before the kind is read: the message names the byte.
			field: label === 'nulByte' || label === 'loneSurrogate' ? undefined : 'kind',
			names: label === 'nulByte' ? /0x00|\\u0000|Unicode/ : label === 'loneSurrogate' ? /surrogate|json|kind/i : /kind/,
		});
	}
	return cases;
}

/** Calls a worker may make wrongly, on a running job it holds. */
export function workerCases(store: JobStore, runningJob: string): ApiCase[] {
	return [
		{
			name: 'tick progress NaN',
			call: () => store.tick(runningJob, { progress: Number.NaN }),
			expect: 'invalid_input',
			field: 'progress',
			names: /progress/,
		},
		{
			name: 'tick progress 101',
			call: () => store.tick(runningJob, { progress: 101 }),
			expect: 'invalid_input',
			field: 'progress',
			names: /progress/,
		},
		{
			name: 'tick progress -1',
			call: () => store.tick(runningJob, { progress: -1 }),
			expect: 'invalid_input',
			field: 'progress',
			names: /progress/,
		},
		{
			name: 'tick an overlong stage',
			call: () => store.tick(runningJob, { stage: 's'.repeat(300) }),
			expect: 'invalid_input',
			field: 'stage',
			names: /stage/,
		},
		{
			name: 'tick a stage with a NUL byte',
			call: () => store.tick(runningJob, { stage: 'a\u0000b' }),
			expect: 'invalid_input',
			names: /0x00/,
		},
		{
			name: 'tick attempt 1.5',
			call: () => store.tick(runningJob, { attempt: 1.5 }),
			expect: 'invalid_input',
			field: 'attempt',
			names: /attempt/,
		},
		{
			name: 'succeed with a non-UUID resultId',
			call: () => store.succeed(runningJob, { resultId: '<b>x</b>' }),
			expect: 'invalid_input',
			field: 'resultId',
			names: /resultId/,
		},
		{
			name: 'succeed with timings not an object',
			call: () => store.succeed(runningJob, { timings: [1] as never }),
			expect: 'invalid_input',
			field: 'timings',
			names: /timings/,
		},
		{
			name: 'fail with an empty sentence',
			call: () => store.fail(runningJob, ''),
			expect: 'invalid_input',
			field: 'error',
			names: /error/,
		},
		{
			name: 'fail with a blank sentence',
			call: () => store.fail(runningJob, ' \n\t '),
			expect: 'invalid_input',
			field: 'error',
			names: /error/,
		},
		{
			name: 'fail with a NUL byte',
			call: () => store.fail(runningJob, 'bad\u0000news'),
			expect: 'invalid_input',
			names: /0x00/,
		},
		{
			name: 'retry with delaySeconds NaN',
			call: () => store.retry(runningJob, 'again', { delaySeconds: Number.NaN }),
			expect: 'invalid_input',
			field: 'delaySeconds',
			names: /delaySeconds/,
		},
		{
			name: 'claim with heartbeatMs 1.5',
			call: () => store.claim(NIL_UUID, { heartbeatMs: 1.5 }),
			expect: 'invalid_input',
			field: 'heartbeatMs',
			names: /heartbeatMs/,
		},
		{
			name: 'claimNext limit 1.5',
			call: () => store.claimNext({ limit: 1.5 }),
			expect: 'invalid_input',
			field: 'limit',
			names: /limit/,
		},
		{ name: 'succeed a non-UUID id', call: () => store.succeed('not-a-uuid'), expect: 'job_not_found' },
		{ name: 'release an unknown job', call: () => store.release(NIL_UUID), expect: 'job_not_found' },
		{ name: 'succeed a queued job', call: () => store.succeed(NIL_UUID), expect: 'job_not_found' },
	];
}

/** Programmer mistakes: plain TypeError/RangeError at definition, never a 4xx later. */
export function definitionCases(adapter: JobStore['adapter']): ApiCase[] {
	return [
		{
			name: 'defineJobKind without a name',
			call: () => defineJobKind({ name: '', params: z.object({}) }),
			expect: 'TypeError',
			names: /name/,
		},
		{
			name: 'defineJobKind with a number for name',
			call: () => defineJobKind({ name: 42 as never, params: z.object({}) }),
			expect: 'TypeError',
			names: /name/,
		},
		{
			name: 'defineJobKind without params',
			call: () => defineJobKind({ name: 'x', params: undefined as never }),
			expect: 'TypeError',
			names: /params/,
		},
		{
			name: 'defineJobKind with a plain object for params',
			call: () => defineJobKind({ name: 'x', params: { title: 'string' } as never }),
			expect: 'TypeError',
			names: /params/,
		},
		{
			name: 'JobStore staleAfterMs -1',
			call: () => new JobStore(adapter, { staleAfterMs: -1 }),
			expect: 'RangeError',
			names: /staleAfterMs/,
		},
		{
			name: 'JobStore staleAfterMs NaN',
			call: () => new JobStore(adapter, { staleAfterMs: Number.NaN }),
			expect: 'RangeError',
			names: /staleAfterMs/,
		},
	];
}
