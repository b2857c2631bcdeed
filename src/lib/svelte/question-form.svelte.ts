import type { z } from 'zod';
import { isJobError } from '../errors.ts';
import { answerProblem, schemaOfQuestion, type AskedQuestion } from '../store/questions.ts';
import { questionShape, type QuestionShape } from './question-shape.ts';

/**
 * Why an answer was refused: the message, the field it names, and whether the
 * check here refused it (the shape's own sentence then says what it must be)
 * or the database did (its message says why).
 */
export interface QuestionRefusal {
	message: string;
	field: string | null;
	checkedHere: boolean;
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
	#error = $state.raw<QuestionRefusal | null>(null);
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
	get error(): QuestionRefusal | null {
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
		// Nothing ticked is an empty list, not no answer.
		const value = this.value === undefined && this.shape.kind === 'several' ? [] : this.value;
		const problem = schema ? answerProblem(schema, value) : null;
		if (problem) {
			this.#error = { message: problem.message, field: problem.field, checkedHere: true };
			return;
		}
		this.#submitting = true;
		this.#error = null;
		try {
			await this.#job().answer(value);
		} catch (e) {
			this.#error = {
				message: e instanceof Error ? e.message : String(e),
				field: isJobError(e, 'invalid_input') ? e.field : null,
				checkedHere: false,
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
