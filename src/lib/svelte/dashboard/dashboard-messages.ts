/**
 * The admin dashboard's words, in the languages the package ships. Statuses
 * come from the job components' own strings; a failed job's sentence is the
 * job's `error`, shown as the user saw it.
 */
import { JOB_MESSAGES, resolveJobLocale, type JobLocale } from '../messages.ts';

/**
 * Every string the admin dashboard shows. `{kind}`, `{n}` and `{id}` are replaced.
 */
export interface DashboardMessages {
	title: string;
	status: (typeof JOB_MESSAGES)['en']['status'];
	queues: string;
	noQueues: string;
	kind: string;
	doneLastHour: string;
	failedLastHour: string;
	state: string;
	active: string;
	paused: string;
	rateLimited: string;
	/** `{starts}` per `{seconds}` s. */
	rateLimit: string;
	/** The queue table's column, and its form: `{starts}` per `{seconds}` s; set or remove. */
	rateColumn: string;
	noRateLimit: string;
	starts: string;
	perSeconds: string;
	setRate: string;
	clearRate: string;
	maxRunning: string;
	actions: string;
	pause: string;
	resume: string;
	cancelQueued: string;
	failedJobs: string;
	noFailed: string;
	moreFailed: string;
	job: string;
	sentence: string;
	code: string;
	attempts: string;
	failedAt: string;
	open: string;
	tryAgain: string;
	cancel: string;
	filter: string;
	errorCode: string;
	from: string;
	to: string;
	allKinds: string;
	apply: string;
	bulk: string;
	replayMatching: string;
	deleteFinished: string;
	deleteHelp: string;
	deleteHelpAll: string;
	endedBefore: string;
	timeline: string;
	timelineLink: string;
	details: string;
	createdAt: string;
	startedAt: string;
	finishedAt: string;
	owner: string;
	close: string;
	retryOf: string;
	/** What the live region says after each action. */
	done: {
		cancel: { one: string; none: string };
		tryAgain: string;
		replay: string;
		cancelMany: string;
		pause: string;
		resume: string;
		setRateLimit: string;
		clearRateLimit: string;
		deleteFinished: string;
	};
	refused: string;
}

/**
 * The dashboard's strings per locale.
 *
 * @example
 * DASHBOARD_MESSAGES['pt-BR'].pause; // 'Pausar'
 */
export const DASHBOARD_MESSAGES: Readonly<Record<JobLocale, DashboardMessages>> = {
	en: {
		title: 'Jobs',
		status: JOB_MESSAGES.en.status,
		queues: 'Queues',
		noQueues: 'No jobs yet.',
		kind: 'Kind',
		doneLastHour: 'Done, last hour',
		failedLastHour: 'Failed, last hour',
		state: 'State',
		active: 'Active',
		paused: 'Paused',
		rateLimited: 'Rate-limited',
		rateLimit: '{starts} per {seconds} s',
		rateColumn: 'Rate limit',
		noRateLimit: 'none',
		starts: 'Starts',
		perSeconds: 'per seconds',
		setRate: 'Set rate limit of {kind}',
		clearRate: 'Remove rate limit of {kind}',
		maxRunning: 'At most running',
		actions: 'Actions',
		pause: 'Pause {kind}',
		resume: 'Resume {kind}',
		cancelQueued: 'Cancel queued {kind}',
		failedJobs: 'Failed jobs',
		noFailed: 'No failed jobs match.',
		moreFailed: 'More failed jobs may match than are shown: narrow the filter.',
		job: 'Job',
		sentence: 'What the user saw',
		code: 'Code',
		attempts: 'Attempts',
		failedAt: 'Failed at (UTC)',
		open: 'Open job {id}',
		tryAgain: 'Try job {id} again',
		cancel: 'Cancel job {id}',
		filter: 'Filter',
		errorCode: 'Error code',
		from: 'From (UTC)',
		to: 'To (UTC)',
		allKinds: 'All kinds',
		apply: 'Show',
		bulk: 'For every failed job matching the filter',
		replayMatching: 'Replay matching failed jobs',
		deleteFinished: 'Delete finished jobs',
		deleteHelp: 'Done, failed and cancelled {kind} jobs that ended before:',
		deleteHelpAll: 'Done, failed and cancelled jobs of every kind that ended before:',
		endedBefore: 'Ended before (UTC)',
		timeline: 'Timeline of job {id}',
		timelineLink: 'Timeline',
		details: 'Job {id}',
		createdAt: 'Enqueued (UTC)',
		startedAt: 'Started (UTC)',
		finishedAt: 'Finished (UTC)',
		owner: 'Owner',
		close: 'Close',
		retryOf: 'Tries again',
		done: {
			cancel: { one: 'Job {id} cancelled.', none: 'Job {id} had already ended: nothing to cancel.' },
			tryAgain: 'Job {id} queued again as job {newId}.',
			replay: '{n} failed jobs queued again.',
			cancelMany: '{n} queued {kind} jobs cancelled.',
			pause: '{kind} paused: no new job of this kind starts.',
			resume: '{kind} resumed.',
			setRateLimit: 'Rate limit of {kind} set.',
			clearRateLimit: 'Rate limit of {kind} removed.',
			deleteFinished: '{n} finished jobs deleted.',
		},
		refused: 'Not done: {message}',
	},
	'pt-BR': {
		title: 'Trabalhos',
		status: JOB_MESSAGES['pt-BR'].status,
		queues: 'Filas',
		noQueues: 'Nenhum trabalho ainda.',
		kind: 'Tipo',
		doneLastHour: 'Concluídos, última hora',
		failedLastHour: 'Falhas, última hora',
		state: 'Estado',
		active: 'Ativa',
		paused: 'Pausada',
		rateLimited: 'Com limite de ritmo',
		rateLimit: '{starts} a cada {seconds} s',
		rateColumn: 'Limite de ritmo',
		noRateLimit: 'nenhum',
		starts: 'Inícios',
		perSeconds: 'a cada (segundos)',
		setRate: 'Definir limite de ritmo de {kind}',
		clearRate: 'Remover limite de ritmo de {kind}',
		maxRunning: 'Máximo em execução',
		actions: 'Ações',
		pause: 'Pausar {kind}',
		resume: 'Retomar {kind}',
		cancelQueued: 'Cancelar {kind} na fila',
		failedJobs: 'Trabalhos que falharam',
		noFailed: 'Nenhum trabalho com falha corresponde.',
		moreFailed: 'Pode haver mais trabalhos com falha do que os mostrados: refine o filtro.',
		job: 'Trabalho',
		sentence: 'O que o usuário viu',
		code: 'Código',
		attempts: 'Tentativas',
		failedAt: 'Falhou em (UTC)',
		open: 'Abrir trabalho {id}',
		tryAgain: 'Tentar de novo o trabalho {id}',
		cancel: 'Cancelar trabalho {id}',
		filter: 'Filtro',
		errorCode: 'Código do erro',
		from: 'De (UTC)',
		to: 'Até (UTC)',
		allKinds: 'Todos os tipos',
		apply: 'Mostrar',
		bulk: 'Para cada trabalho com falha que corresponde ao filtro',
		replayMatching: 'Repetir os trabalhos com falha correspondentes',
		deleteFinished: 'Excluir trabalhos encerrados',
		deleteHelp: 'Trabalhos {kind} concluídos, com falha e cancelados encerrados antes de:',
		deleteHelpAll: 'Trabalhos de todos os tipos concluídos, com falha e cancelados encerrados antes de:',
		endedBefore: 'Encerrados antes de (UTC)',
		timeline: 'Linha do tempo do trabalho {id}',
		timelineLink: 'Linha do tempo',
		details: 'Trabalho {id}',
		createdAt: 'Enfileirado (UTC)',
		startedAt: 'Iniciado (UTC)',
		finishedAt: 'Encerrado (UTC)',
		owner: 'Dono',
		close: 'Fechar',
		retryOf: 'Tenta de novo',
		done: {
			cancel: { one: 'Trabalho {id} cancelado.', none: 'O trabalho {id} já tinha terminado: nada a cancelar.' },
			tryAgain: 'Trabalho {id} colocado na fila de novo como {newId}.',
			replay: '{n} trabalhos com falha colocados na fila de novo.',
			cancelMany: '{n} trabalhos {kind} na fila cancelados.',
			pause: '{kind} pausado: nenhum trabalho novo deste tipo começa.',
			resume: '{kind} retomado.',
			setRateLimit: 'Limite de ritmo de {kind} definido.',
			clearRateLimit: 'Limite de ritmo de {kind} removido.',
			deleteFinished: '{n} trabalhos encerrados excluídos.',
		},
		refused: 'Não foi feito: {message}',
	},
};

/**
 * The dashboard's strings for a locale tag (any Portuguese tag reads as pt-BR).
 *
 * @example
 * dashboardMessagesFor('pt-PT').resume; // 'Retomar {kind}'
 */
export function dashboardMessagesFor(tag?: string | null): DashboardMessages {
	return DASHBOARD_MESSAGES[resolveJobLocale(tag)];
}

/** Replaces `{name}` in a message. */
export function fill(message: string, values: Record<string, string | number>): string {
	return message.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}
