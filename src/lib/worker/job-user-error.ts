/**
 * The expected failure: the handler knows why the work cannot be done and
 * says so in the user's language. The worker closes the job as failed at once
 * (no retry: trying again would fail the same way).
 */
import { JobError } from '../errors.ts';
import { pickLocale, type LocalizedText } from './messages.ts';

/**
 * Options of {@link JobUserError}.
 */
export interface JobUserErrorOptions {
	/**
	 * Stored in `error_code`: a snake_case identifier a screen or an admin can filter on.
	 * @default 'user_error'
	 */
	errorCode?: string;
	/** What went wrong underneath (logged, never shown). */
	cause?: unknown;
}

/**
 * Throw it from a handler for an expected failure: the job ends `failed` with
 * this sentence in the job's locale (exact tag, then same language, then
 * English, then the first given). `message` is the English (or first) variant.
 *
 * @example
 * ```ts
 * if (!payload?.length) {
 *   throw new JobUserError(
 *     { en: 'The file is empty.', 'pt-BR': 'O arquivo está vazio.' },
 *     { errorCode: 'empty_file' },
 *   );
 * }
 * ```
 */
export class JobUserError extends JobError {
	/** Every variant given, by language tag. */
	readonly sentences: LocalizedText;
	/** What `error_code` will hold. */
	readonly errorCode: string;

	constructor(sentence: string | LocalizedText, options: JobUserErrorOptions = {}) {
		const sentences: LocalizedText = typeof sentence === 'string' ? { en: sentence } : { ...sentence };
		super('job_user_error', pickLocale(sentences, 'en'), { cause: options.cause });
		this.name = 'JobUserError';
		this.sentences = Object.freeze(sentences);
		const errorCode = options.errorCode ?? 'user_error';
		if (!/^[a-z][a-z0-9_]{0,63}$/.test(errorCode))
			throw new TypeError(`errorCode must be a snake_case identifier; got ${JSON.stringify(errorCode)}`);
		this.errorCode = errorCode;
	}

	/**
	 * The sentence for a locale (what the worker writes into `error`).
	 *
	 * @example
	 * ```ts
	 * new JobUserError({ en: 'Too big.', 'pt-BR': 'Grande demais.' }).sentenceFor('pt-BR'); // 'Grande demais.'
	 * ```
	 */
	sentenceFor(locale: string | null | undefined): string {
		return pickLocale(this.sentences, locale);
	}
}
