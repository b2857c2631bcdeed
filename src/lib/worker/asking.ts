/**
 * `ctx.ask`: a handler asks the job's owner a question and gets a typed
 * answer. The first time, the question is stored and the job parks
 * (`waiting`, the worker's slot free) by throwing {@link WaitingForAnswer};
 * once the owner answers, the job is queued again and the handler runs again
 * from the top, on any worker, where the same call returns the stored answer.
 *
 * Questions are keyed within the job: the n-th `ctx.ask` of a run is `ask-n`
 * unless it names its own `key`. As in any durable-execution system that
 * replays a function, a handler must ask its questions in the same order on
 * every run (or name them), and do before each ask only work that is safe to
 * do again.
 *
 * An answer stored that the handler's schema refuses (a `pattern` the
 * database does not check, or a schema changed since the question was asked)
 * never fails the job at once: the question is asked again, saying why in the
 * job's language (`answerRefusedPrompt`), under the key `<key>~2`, `<key>~3`,
 * ...; only after {@link MAX_ASKS} askings does the job fail (`invalid_answer`).
 */
import { z } from 'zod';
import type { Job } from '../store/job.ts';
import type { JobStore } from '../store/job-store.ts';
import type { AskResult } from '../store/questions.ts';
import { JobUserError } from './job-user-error.ts';
import { answerRefusedPrompt, INVALID_ANSWER, MAX_ASKS, pickLocale, type LocalizedText } from './messages.ts';

/**
 * Options of `ctx.ask`.
 */
export interface AskOptions {
	/** The question, as one sentence or one per language (picked by the job's locale). */
	prompt: string | LocalizedText;
	/** How long the owner has to answer; past it the job fails (`question_unanswered`). @default 86_400_000 (a day) */
	timeoutMs?: number;
	/** Names the question within the job. @default `ask-<n>`, n counting this run's asks from 1 */
	key?: string;
}

/**
 * Thrown by `ctx.ask()` when the job went to `waiting` for an answer. Let it
 * through: a `catch` in the handler must rethrow it (see {@link isWaitingForAnswer}).
 *
 * @example
 * ```ts
 * try {
 *   language = await ctx.ask(z.enum(['en', 'pt-BR']), { prompt: 'Which language?' });
 * } catch (e) {
 *   if (isWaitingForAnswer(e)) throw e;
 *   // ...
 * }
 * ```
 */
export class WaitingForAnswer extends Error {
	constructor(jobId: string, key: string) {
		super(`job ${jobId} is waiting for the answer to ${key}; it runs again once its owner answers`);
		this.name = 'WaitingForAnswer';
	}
}

/**
 * Whether `e` is the parking signal of `ctx.ask()`.
 *
 * @example
 * ```ts
 * if (isWaitingForAnswer(e)) throw e;
 * ```
 */
export function isWaitingForAnswer(e: unknown): e is WaitingForAnswer {
	return e instanceof WaitingForAnswer;
}

/** The `ask` of one run's context. */
export function askContext(job: Job, store: JobStore) {
	let asked = 0;
	return {
		ask: async <S extends z.ZodType>(schema: S, options: AskOptions): Promise<z.output<S>> => {
			asked += 1;
			const key = options.key ?? `ask-${asked}`;
			const prompt = typeof options.prompt === 'string' ? options.prompt : pickLocale(options.prompt, job.locale);
			const found = await store.ask(job.id, {
				key,
				prompt,
				schema: z.toJSONSchema(schema) as Record<string, unknown>,
				timeoutMs: options.timeoutMs,
				attempt: job.attempts,
			});
			return await answered(found, key, 1);
			/** The answer found under `at` (the `round`-th asking), or the question asked again saying why it did not fit. */
			async function answered(result: AskResult, at: string, round: number): Promise<z.output<S>> {
				if (!result.answered) throw new WaitingForAnswer(job.id, at);
				const parsed = schema.safeParse(result.answer);
				if (parsed.success) return parsed.data;
				if (round >= MAX_ASKS)
					throw new JobUserError(INVALID_ANSWER, { errorCode: 'invalid_answer', cause: parsed.error });
				const next = askAgainKey(key, round + 1);
				const again = await store.ask(job.id, {
					key: next,
					prompt: answerRefusedPrompt(parsed.error.issues[0]!, prompt, job.locale),
					schema: z.toJSONSchema(schema) as Record<string, unknown>,
					timeoutMs: options.timeoutMs,
					attempt: job.attempts,
				});
				return await answered(again, next, round + 1);
			}
		},
	};
}

/**
 * The key of the `round`-th asking of the question `key` (round 2 and later):
 * its own row, so the refused answer stays stored under the first and every
 * run walks the same keys to the answer that fits (or the question still open).
 */
function askAgainKey(key: string, round: number): string {
	return `${key.slice(0, 96)}~${round}`;
}
