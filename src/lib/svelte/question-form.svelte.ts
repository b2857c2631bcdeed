import type { z } from 'zod';
import { isJobError } from '../errors.ts';
import { answerProblem, schemaOfQuestion, type AskedQuestion } from '../store/questions.ts';

/**
 * How a question is answered, read from its JSON Schema: a choice (an enum),
 * yes or no (a boolean), a text (a string); anything else is not rendered.
 */
export type QuestionShape =
	| { kind: 'choice'; options: readonly string[] }
	| { kind: 'yesno' }
	| { kind: 'text'; maxLength: number | null }
	| { kind: 'unsupported' };

/**
 * The shape of a question's answer, for the common cases.
 *
 * @example
 * questionShape({ type: 'string', enum: ['en', 'pt-BR'] }); // { kind: 'choice', options: ['en', 'pt-BR'] }
 */
export function questionShape(schema: Record<string, unknown>): QuestionShape {
	const options = schema.enum;
	if (Array.isArray(options) && options.every((o) => typeof o === 'string')) return { kind: 'choice', options };
	if (schema.type === 'boolean') return { kind: 'yesno' };
	if (schema.type === 'string')
		return { kind: 'text', maxLength: typeof schema.maxLength === 'number' ? schema.maxLength : null };
	return { kind: 'unsupported' };
}

/**
 * The job a {@link QuestionForm} answers: a {@link WatchedJob} is one.
 */
export interface AnsweringJob {
	readonly question: AskedQuestion | null;
	answer(value: unknown): Promise<void>;
}

/**
 * The state behind the JobQuestion component: the value being chosen or
 * typed, the check before sending (zod, from the question's JSON Schema: a
 * refusal names the field, as the database's would), the request in flight,
 * and the refusal shown when it fails (the question stays).
 *
 * @example
 * const form = new QuestionForm(() => job);
 * form.value = 'pt-BR';
 * await form.submit();
 */
export class QuestionForm {
	readonly #job: () => AnsweringJob;
	#value = $state<unknown>(undefined);
	#submitting = $state(false);
	#error = $state.raw<{ message: string; field: string | null } | null>(null);
	/** The question the value belongs to: a new question starts over. */
	#for: string | null = null;

	constructor(job: () => AnsweringJob) {
		this.#job = job;
	}

	/** The open question, or null. */
	get question(): AskedQuestion | null {
		return this.#job().question;
	}

	/** How it is answered (choice, yes/no, text). */
	readonly shape: QuestionShape = $derived(
		this.question ? questionShape(this.question.schema) : ({ kind: 'unsupported' } as const),
	);

	/** The answer being given; undefined until chosen or typed. */
	get value(): unknown {
		const key = this.#key();
		return key === this.#for ? this.#value : undefined;
	}

	set value(next: unknown) {
		this.#for = this.#key();
		this.#value = next;
		this.#error = null;
	}

	/** True while the answer is on its way. */
	get submitting(): boolean {
		return this.#submitting;
	}

	/** Why the last answer was refused, and which field (`answer`, `answer.language`); null otherwise. */
	get error(): { message: string; field: string | null } | null {
		return this.#error;
	}

	/**
	 * Checks the value against the question and sends it. Never rejects: a
	 * refusal (here or from the database) lands in `error`.
	 */
	async submit(): Promise<void> {
		const question = this.question;
		if (!question || this.#submitting) return;
		let schema: z.ZodType | null = null;
		try {
			schema = schemaOfQuestion(question);
		} catch {
			// A schema zod cannot read back: the database still checks it.
		}
		const problem = schema ? answerProblem(schema, this.value) : null;
		if (problem) {
			this.#error = { message: problem.message, field: problem.field };
			return;
		}
		this.#submitting = true;
		this.#error = null;
		try {
			await this.#job().answer(this.value);
		} catch (e) {
			this.#error = {
				message: e instanceof Error ? e.message : String(e),
				field: isJobError(e, 'invalid_input') ? e.field : null,
			};
		} finally {
			this.#submitting = false;
		}
	}

	#key(): string | null {
		const q = this.question;
		return q ? `${q.jobId}:${q.key}:${q.askedAt.getTime()}` : null;
	}
}
