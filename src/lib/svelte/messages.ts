/**
 * The words the components show, in the languages the package ships. Small on
 * purpose: statuses and buttons. The sentences that explain a failure come from
 * the job row (`error`), written by the handler in the user's language.
 */
import type { HoldReason } from '../store/store-options.ts';
import type { JobSnapshotStatus } from './types.ts';

/** A sentence with a number `{n}` in it, as it reads for exactly one and for any other count. */
export interface PluralText {
	one: string;
	other: string;
}

/**
 * Every string the components show.
 */
export interface JobMessages {
	status: Record<JobSnapshotStatus, string>;
	/** Shown before the first snapshot arrives. */
	loading: string;
	cancel: string;
	cancelling: string;
	/** Accessible name of a progress bar that has no label of its own. */
	progress: string;
	/** Accessible name of the "queued or running" strip. */
	inFlight: string;
	/** What the strip says when there is nothing queued or running. */
	nothingInFlight: string;
	loadMore: string;
	/** Under a running job whose worker stopped answering. */
	notResponding: string;
	/** The badge, and the bar's spoken value, of a running job whose worker stopped answering. */
	silent: string;
	/** A queued job with a future start; `{time}` is replaced by the start, in the locale. */
	scheduledFor: string;
	/** A job queued again after an attempt ended early; `{n}` and `{max}` are replaced. */
	retrying: string;
	/** Time left, from the run's own pace: under a minute, `{n}` minutes, `{n}` hours (one: exactly 1; other: the rest). */
	left: { lessThanMinute: string; minutes: PluralText; hours: PluralText };
	/** A running job past the end its pace promised. */
	longerThanUsual: string;
	/** A queued job held back by a concurrency limit; `{n}` running jobs of the kind `{kind}` hold it. */
	held: string;
	/** A queued job whose kind `{kind}` an admin paused. */
	paused: string;
	/** A queued job waiting for its kind `{kind}`'s rate limit (starts per interval) to allow another start. */
	rateLimited: string;
	/** A parent waiting for its children; `{n}` of `{total}` have not ended. */
	waitingForChildren: string;
	/** A job waiting for its owner's answer to the question it asked. */
	waitingForAnswer: string;
	/** Accessible name of the list of a job's children. */
	children: string;
	/** A queued job behind the same user's own jobs: one, or `{n}` of them. */
	ahead: { one: string; other: string };
	/** The job's timeline (JobTimeline). */
	timeline: {
		/** Accessible name of the list. */
		name: string;
		empty: string;
		/** A transition, by its event. */
		events: Record<
			| 'queued'
			| 'claimed'
			| 'retried'
			| 'reclaimed'
			| 'released'
			| 'waiting'
			| 'resumed'
			| 'done'
			| 'failed'
			| 'cancelled',
			string
		>;
		/** A log line's level. */
		levels: Record<'debug' | 'info' | 'warn' | 'error', string>;
		/** `{n}` is replaced by the attempt. */
		attempt: string;
		/** `{actor}` is replaced by who made the change. */
		by: string;
	};
	/** The question a waiting job asks its owner (JobQuestion). */
	question: {
		/** Accessible name of the form. */
		label: string;
		send: string;
		sending: string;
		yes: string;
		no: string;
		/** When it must be answered by; `{time}` is replaced. */
		answerBy: string;
		/** An answer refused; `{field}` names the field at fault. */
		refused: string;
		/** No answer given where one is needed. */
		required: string;
		/** What an answer must be (the hint under the field, and why a value was refused): its kind... */
		number: string;
		integer: string;
		date: string;
		dateTime: string;
		text: string;
		chooseOne: string;
		chooseAny: string;
		/** ...and its bounds; `{n}`, `{min}`, `{max}` and `{pattern}` are replaced. */
		atLeast: string;
		atMost: string;
		moreThan: string;
		lessThan: string;
		chooseAtLeast: string;
		chooseAtMost: string;
		chooseBetween: string;
		atLeastChars: string;
		atMostChars: string;
		pattern: string;
	};
	/** Start a failed or cancelled job again (TryAgainButton). */
	tryAgain: string;
	tryingAgain: string;
	/** Trying again was refused; the reason follows. */
	tryAgainRefused: string;
	/** Under a job that failed for good (an error its kind declares permanent), where Try again is not offered. */
	failedForGood: string;
	/** Accessible name of a job's streamed output that has no label of its own. */
	output: string;
	/** Said once a job's streamed output is complete. */
	outputEnded: string;
}

/**
 * The shipped locales.
 */
export type JobLocale = 'en' | 'pt-BR';

/**
 * The strings per locale.
 *
 * @example
 * JOB_MESSAGES['pt-BR'].cancel; // 'Cancelar'
 */
export const JOB_MESSAGES: Readonly<Record<JobLocale, JobMessages>> = {
	en: {
		status: {
			queued: 'Queued',
			running: 'Running',
			waiting: 'Waiting',
			done: 'Done',
			failed: 'Failed',
			cancelled: 'Cancelled',
		},
		loading: 'Loading…',
		cancel: 'Cancel',
		cancelling: 'Cancelling…',
		progress: 'Progress',
		inFlight: 'Queued or running',
		nothingInFlight: 'Nothing queued or running.',
		loadMore: 'Load more',
		notResponding: 'Not responding — it will be retried',
		silent: 'Not responding',
		scheduledFor: 'Scheduled for {time}',
		retrying: 'Retrying (attempt {n} of {max})',
		left: {
			lessThanMinute: 'less than a minute left',
			minutes: { one: 'about 1 min left', other: 'about {n} min left' },
			hours: { one: 'about 1 h left', other: 'about {n} h left' },
		},
		longerThanUsual: 'taking longer than usual',
		held: 'waiting: {n} {kind} already running',
		paused: 'waiting: {kind} is paused by the operator',
		rateLimited: 'waiting for the rate limit of {kind}',
		waitingForChildren: 'waiting for {n} of {total} parts',
		waitingForAnswer: 'waiting for your answer',
		children: 'Parts',
		ahead: { one: '1 of your jobs is ahead of this one', other: '{n} of your jobs are ahead of this one' },
		timeline: {
			name: 'Timeline',
			empty: 'Nothing recorded yet.',
			events: {
				queued: 'Queued',
				claimed: 'Started',
				retried: 'Will be retried',
				reclaimed: 'Worker lost; queued again',
				released: 'Given back to the queue',
				waiting: 'Waiting for its parts',
				resumed: 'Parts finished; queued again',
				done: 'Done',
				failed: 'Failed',
				cancelled: 'Cancelled',
			},
			levels: { debug: 'Debug', info: 'Info', warn: 'Warning', error: 'Error' },
			attempt: 'attempt {n}',
			by: 'by {actor}',
		},
		question: {
			label: 'A question about this job',
			send: 'Answer',
			sending: 'Sending…',
			yes: 'Yes',
			no: 'No',
			answerBy: 'Please answer by {time}.',
			refused: 'This answer was not accepted ({field}):',
			required: 'An answer is needed.',
			number: 'A number',
			integer: 'A whole number',
			date: 'A date (year-month-day)',
			dateTime: 'A date and time',
			text: 'Text',
			chooseOne: 'Choose one',
			chooseAny: 'Choose any of them',
			atLeast: 'at least {n}',
			atMost: 'at most {n}',
			moreThan: 'more than {n}',
			lessThan: 'less than {n}',
			chooseAtLeast: 'Choose at least {n}',
			chooseAtMost: 'Choose at most {n}',
			chooseBetween: 'Choose from {min} to {max}',
			atLeastChars: 'at least {n} characters',
			atMostChars: 'at most {n} characters',
			pattern: 'matching the pattern {pattern}',
		},
		tryAgain: 'Try again',
		tryingAgain: 'Starting again…',
		tryAgainRefused: 'It could not be started again:',
		failedForGood: 'Trying again would fail the same way: start a new job with other input.',
		output: 'Output',
		outputEnded: 'Finished writing.',
	},
	'pt-BR': {
		status: {
			queued: 'Na fila',
			running: 'Em execução',
			waiting: 'Aguardando',
			done: 'Concluído',
			failed: 'Falhou',
			cancelled: 'Cancelado',
		},
		loading: 'Carregando…',
		cancel: 'Cancelar',
		cancelling: 'Cancelando…',
		progress: 'Progresso',
		inFlight: 'Na fila ou em execução',
		nothingInFlight: 'Nada na fila nem em execução.',
		loadMore: 'Carregar mais',
		notResponding: 'Sem resposta — será tentado de novo',
		silent: 'Sem resposta',
		scheduledFor: 'Agendado para {time}',
		retrying: 'Tentando de novo (tentativa {n} de {max})',
		left: {
			lessThanMinute: 'menos de um minuto restante',
			minutes: { one: 'cerca de 1 min restante', other: 'cerca de {n} min restantes' },
			hours: { one: 'cerca de 1 h restante', other: 'cerca de {n} h restantes' },
		},
		longerThanUsual: 'demorando mais que o normal',
		held: 'aguardando: {n} {kind} já em execução',
		paused: 'aguardando: o operador pausou {kind}',
		rateLimited: 'aguardando o limite de frequência de {kind}',
		waitingForChildren: 'aguardando {n} de {total} partes',
		waitingForAnswer: 'aguardando a sua resposta',
		children: 'Partes',
		ahead: { one: '1 trabalho seu está à frente deste', other: '{n} trabalhos seus estão à frente deste' },
		timeline: {
			name: 'Linha do tempo',
			empty: 'Nada registrado ainda.',
			events: {
				queued: 'Na fila',
				claimed: 'Iniciado',
				retried: 'Será tentado de novo',
				reclaimed: 'Worker perdido; de volta à fila',
				released: 'Devolvido à fila',
				waiting: 'Aguardando suas partes',
				resumed: 'Partes concluídas; de volta à fila',
				done: 'Concluído',
				failed: 'Falhou',
				cancelled: 'Cancelado',
			},
			levels: { debug: 'Depuração', info: 'Info', warn: 'Aviso', error: 'Erro' },
			attempt: 'tentativa {n}',
			by: 'por {actor}',
		},
		question: {
			label: 'Uma pergunta sobre este trabalho',
			send: 'Responder',
			sending: 'Enviando…',
			yes: 'Sim',
			no: 'Não',
			answerBy: 'Responda até {time}.',
			refused: 'Esta resposta não foi aceita ({field}):',
			required: 'É preciso responder.',
			number: 'Um número',
			integer: 'Um número inteiro',
			date: 'Uma data (ano-mês-dia)',
			dateTime: 'Uma data e hora',
			text: 'Texto',
			chooseOne: 'Escolha uma opção',
			chooseAny: 'Escolha quantas quiser',
			atLeast: 'no mínimo {n}',
			atMost: 'no máximo {n}',
			moreThan: 'maior que {n}',
			lessThan: 'menor que {n}',
			chooseAtLeast: 'Escolha pelo menos {n}',
			chooseAtMost: 'Escolha no máximo {n}',
			chooseBetween: 'Escolha de {min} a {max}',
			atLeastChars: 'no mínimo {n} caracteres',
			atMostChars: 'no máximo {n} caracteres',
			pattern: 'no formato {pattern}',
		},
		tryAgain: 'Tentar de novo',
		tryingAgain: 'Começando de novo…',
		tryAgainRefused: 'Não foi possível começar de novo:',
		failedForGood: 'Tentar de novo falharia do mesmo jeito: comece um novo trabalho com outra entrada.',
		output: 'Resultado',
		outputEnded: 'Texto concluído.',
	},
};

/**
 * The sentence a queued job's screen shows for what holds it back: a full
 * concurrency limit, a paused kind, or a spent rate limit.
 *
 * @internal
 * @example
 * holdSentence(JOB_MESSAGES.en, { kind: 'export', heldBy: 'paused', running: 0, maxRunning: 0 }); // 'waiting: export is paused by the operator'
 */
export function holdSentence(m: JobMessages, hold: HoldReason): string {
	const text = hold.heldBy === 'paused' ? m.paused : hold.heldBy === 'rate' ? m.rateLimited : m.held;
	return text.replace('{n}', String(hold.running)).replace('{kind}', hold.kind);
}

/**
 * Picks the shipped locale closest to a BCP 47 tag: any Portuguese tag reads as
 * 'pt-BR' (the only Portuguese shipped), anything else as 'en'. With no tag, uses
 * `navigator.language` in the browser and 'en' elsewhere. Under SSR pass the
 * locale explicitly (e.g. the job row's `locale`, or the request's), or the
 * server's text and the browser's will differ at hydration.
 *
 * @example
 * resolveJobLocale('pt-PT'); // 'pt-BR'
 * resolveJobLocale('de');    // 'en'
 * resolveJobLocale();        // from navigator.language, or 'en'
 */
export function resolveJobLocale(tag?: string | null): JobLocale {
	const wanted = tag ?? browserLanguage();
	if (!wanted) return 'en';
	return wanted.toLowerCase().split(/[-_]/)[0] === 'pt' ? 'pt-BR' : 'en';
}

/**
 * The strings for a locale tag (resolved with {@link resolveJobLocale}).
 *
 * @example
 * messagesFor('pt-BR').status.done; // 'Concluído'
 */
export function messagesFor(tag?: string | null): JobMessages {
	return JOB_MESSAGES[resolveJobLocale(tag)];
}

function browserLanguage(): string | null {
	// Only in a browser: Node 21+ also has `navigator`, but its language is the server's.
	if (typeof window === 'undefined' || typeof navigator === 'undefined') return null;
	return navigator.language || null;
}

/**
 * A scheduled start as people read it: the time today, date and time otherwise.
 *
 * @example
 * startTime(new Date('2026-12-01T14:00:00'), 'en'); // '2:00 PM' (today) or 'Dec 1, 2026, 2:00 PM'
 */
export function startTime(at: Date, locale?: string | null, now: Date = new Date()): string {
	const tag = resolveJobLocale(locale);
	const sameDay = at.toDateString() === now.toDateString();
	return new Intl.DateTimeFormat(
		tag,
		sameDay ? { timeStyle: 'short' } : { dateStyle: 'medium', timeStyle: 'short' },
	).format(at);
}
