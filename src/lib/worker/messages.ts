/**
 * The sentences the worker itself writes into `error`, per language. A user
 * reads them as they are: no stack traces, no internals, nothing to act on
 * but "try again later" or "start it again".
 */

/**
 * A sentence in several languages, keyed by language tag (`en`, `pt-BR`, ...).
 */
export type LocalizedText = Readonly<Record<string, string>>;

/**
 * Picks the variant for a job's `locale`: the exact tag, then the same
 * language (`pt` for `pt-PT` finds `pt-BR`), then English, then the first given.
 *
 * @example
 * ```ts
 * pickLocale({ en: 'Done.', 'pt-BR': 'Pronto.' }, 'pt-PT'); // 'Pronto.'
 * pickLocale({ en: 'Done.', 'pt-BR': 'Pronto.' }, null); // 'Done.'
 * ```
 */
export function pickLocale(text: LocalizedText, locale: string | null | undefined): string {
	const entries = Object.entries(text).filter(([, v]) => typeof v === 'string' && v.trim() !== '');
	if (entries.length === 0) throw new TypeError('pickLocale: no sentence given');
	const wanted = (locale ?? '').toLowerCase();
	if (wanted) {
		const exact = entries.find(([tag]) => tag.toLowerCase() === wanted);
		if (exact) return exact[1];
		const language = wanted.split('-')[0];
		const same = entries.find(([tag]) => tag.toLowerCase().split('-')[0] === language);
		if (same) return same[1];
	}
	const english = entries.find(([tag]) => tag.toLowerCase() === 'en' || tag.toLowerCase().startsWith('en-'));
	return (english ?? entries[0]!)[1];
}

/**
 * What the worker writes when a handler threw something it did not expect.
 * Deliberately vague: the trace goes to the log (with the job id), never to the user.
 *
 * @example
 * ```ts
 * await store.retry(job.id, pickLocale(UNEXPECTED_FAILURE, job.locale));
 * ```
 */
export const UNEXPECTED_FAILURE: LocalizedText = Object.freeze({
	en: 'Something went wrong while processing this job. Please try again later.',
	'pt-BR': 'Algo deu errado ao processar este trabalho. Tente novamente mais tarde.',
	es: 'Algo salió mal al procesar este trabajo. Inténtalo de nuevo más tarde.',
});

/**
 * What a worker writes when a run passes its kind's time limit
 * (`defineJobHandler(kind, run, { timeoutMs })`, `error_code` `timed_out`).
 *
 * @example
 * ```ts
 * pickLocale(TIMED_OUT, 'pt-BR');
 * ```
 */
export const TIMED_OUT: LocalizedText = Object.freeze({
	en: 'This job took longer than it is allowed to and was stopped.',
	'pt-BR': 'Este trabalho demorou mais do que o permitido e foi interrompido.',
	es: 'Este trabajo tardó más de lo permitido y se detuvo.',
});

/**
 * What the edge worker writes when a job's measured plan cannot fit in a
 * fresh isolate's wall clock: the job fails at once with this sentence
 * (`error_code` `too_long_for_worker`) instead of blocking every drain.
 * Run such kinds on the Node runner.
 *
 * @example
 * ```ts
 * pickLocale(TOO_LONG_FOR_WORKER, 'pt-BR');
 * ```
 */
export const TOO_LONG_FOR_WORKER: LocalizedText = Object.freeze({
	en: 'This job is too large to be processed here. Try a smaller file or split the work.',
	'pt-BR': 'Este trabalho é grande demais para ser processado aqui. Tente um arquivo menor ou divida o trabalho.',
	es: 'Este trabajo es demasiado grande para procesarlo aquí. Prueba con un archivo más pequeño o divide el trabajo.',
});

/**
 * What the worker writes when a job's params no longer satisfy its kind's
 * schema (the schema changed after the job was queued).
 *
 * @example
 * ```ts
 * await store.fail(job.id, pickLocale(INVALID_PARAMS, job.locale), { errorCode: 'invalid_params' });
 * ```
 */
export const INVALID_PARAMS: LocalizedText = Object.freeze({
	en: 'This job was created with settings that are no longer accepted. Please start it again.',
	'pt-BR': 'Este trabalho foi criado com configurações que não são mais aceitas. Inicie-o novamente.',
	es: 'Este trabajo se creó con una configuración que ya no se acepta. Vuelve a iniciarlo.',
});

/**
 * What the worker writes when the work finished but its outcome could not be
 * recorded as it was (a result that is not a row id, a close the database
 * refused). The detail goes to the log; the user learns the job did not complete.
 *
 * @example
 * ```ts
 * await store.fail(job.id, pickLocale(INTERNAL_FAILURE, job.locale), { errorCode: 'invalid_result' });
 * ```
 */
export const INTERNAL_FAILURE: LocalizedText = Object.freeze({
	en: 'This job could not be completed because of an internal error. Please start it again; if it keeps happening, contact support.',
	'pt-BR':
		'Este trabalho não pôde ser concluído por causa de um erro interno. Inicie-o novamente; se continuar acontecendo, fale com o suporte.',
	es: 'Este trabajo no se pudo completar por un error interno. Vuelve a iniciarlo; si sigue ocurriendo, contacta con soporte.',
});

/**
 * What the worker writes when the owner's answers kept not fitting the
 * question the handler asks, past {@link MAX_ASKS} tries (`error_code`
 * `invalid_answer`); before that the question is asked again with
 * {@link answerRefusedPrompt}.
 *
 * @example
 * ```ts
 * pickLocale(INVALID_ANSWER, 'pt-BR');
 * ```
 */
export const INVALID_ANSWER: LocalizedText = Object.freeze({
	en: 'The answer given does not fit the question this job asks. Please try again.',
	'pt-BR': 'A resposta dada não serve para a pergunta deste trabalho. Tente novamente.',
	es: 'La respuesta dada no sirve para la pregunta de este trabajo. Inténtalo de nuevo.',
});

/**
 * How many times one `ctx.ask` asks before a job whose answers keep not
 * fitting fails (`invalid_answer`): the first time and nine times again.
 */
export const MAX_ASKS = 10;

/** What is wrong with an answer, by zod issue code, in English and Portuguese (other languages read English). */
const WHAT_IS_WRONG: Readonly<Record<string, LocalizedText>> = Object.freeze({
	invalid_format: {
		en: 'does not have the expected format',
		'pt-BR': 'não está no formato esperado',
	},
	too_small: {
		en: 'is too small or too short',
		'pt-BR': 'é pequeno ou curto demais',
	},
	too_big: { en: 'is too large or too long', 'pt-BR': 'é grande ou longo demais' },
	not_multiple_of: {
		en: 'is not one of the allowed steps',
		'pt-BR': 'não é um dos valores permitidos',
	},
	invalid_type: { en: 'is not of the expected kind', 'pt-BR': 'não é do tipo esperado' },
	invalid_value: { en: 'is not one of the choices', 'pt-BR': 'não é uma das opções' },
	unrecognized_keys: {
		en: 'is not part of the answer',
		'pt-BR': 'não faz parte da resposta',
	},
	other: { en: 'does not fit the question', 'pt-BR': 'não serve para a pergunta' },
});

const REFUSED: LocalizedText = Object.freeze({
	en: 'Your previous answer was not accepted: {what}. Please answer again.',
	'pt-BR': 'Sua resposta anterior não foi aceita: {what}. Responda novamente.',
});

const IT: LocalizedText = Object.freeze({ en: 'it', 'pt-BR': 'ela' });

/**
 * The prompt of a question asked again because the stored answer did not fit
 * the handler's schema: why (the field, what is wrong with it) in the job's
 * language, then the question. At most 2000 characters, as `job_ask` takes.
 *
 * @example
 * ```ts
 * answerRefusedPrompt({ code: 'invalid_format', path: ['code'] }, 'Qual é o código?', 'pt-BR');
 * // 'Sua resposta anterior não foi aceita: “code” não está no formato esperado. Responda novamente.\n\nQual é o código?'
 * ```
 */
export function answerRefusedPrompt(
	issue: { code: string; path: readonly PropertyKey[]; keys?: readonly string[] },
	prompt: string,
	locale: string | null | undefined,
): string {
	const path = issue.code === 'unrecognized_keys' && issue.keys?.[0] ? [...issue.path, issue.keys[0]] : issue.path;
	const field = path.reduce<string>(
		(at, part) => (typeof part === 'number' ? `${at}[${part}]` : at === '' ? String(part) : `${at}.${String(part)}`),
		'',
	);
	const wrong = pickLocale(WHAT_IS_WRONG[issue.code] ?? WHAT_IS_WRONG.other!, locale);
	const subject = field === '' ? pickLocale(IT, locale) : `“${field}”`;
	const reason = pickLocale(REFUSED, locale).replace('{what}', `${subject} ${wrong}`);
	return `${reason}\n\n${prompt}`.slice(0, 2000);
}
