/**
 * The /admin page's sentences, in English and Brazilian Portuguese (the rest
 * of the demo's are in i18n.ts). Column headings name what each figure is;
 * the views' own comments (Studio) say how it is computed.
 */
import { resolveJobLocale } from 'supabase-jobs/svelte';

const en = {
	title: 'Jobs overview',
	intro:
		'What the operator views of supabase_jobs say now. Only admins (app_metadata.role = admin) may read this page.',
	generatedAt: 'As of',
	counts: 'Jobs by kind and status',
	throughput: 'Finished per hour (last 7 days)',
	latency: 'Queue wait and run time (last 24 hours)',
	failures: 'Failure rates (last 7 days)',
	topErrors: 'Most frequent errors (last 7 days)',
	overrunning: 'Running longer than their kind predicts',
	silent: 'Running jobs whose worker went silent',
	usage: 'Usage per owner (queued and running)',
	none: 'Nothing here.',
	table: 'Table',
	kind: 'Kind',
	status: 'Status',
	jobs: 'Jobs',
	oldest: 'Oldest enqueued',
	hour: 'Hour',
	started: 'Started',
	waitP50: 'Wait p50',
	waitP95: 'Wait p95',
	done: 'Done',
	runP50: 'Run p50',
	runP95: 'Run p95',
	finished: 'Finished',
	failed: 'Failed',
	cancelled: 'Cancelled',
	failureRate: 'Failure rate',
	rank: '#',
	error: 'Error',
	lastSeen: 'Last seen',
	job: 'Job',
	owner: 'Owner',
	runningFor: 'Running for',
	expectedWithin: 'Expected within',
	progress: 'Progress',
	silentFor: 'Silent for',
	beatsMissed: 'Beats missed',
	reclaimableAt: 'Reclaimable at',
	queued: 'Queued',
	running: 'Running',
	activeQuota: 'Of active quota',
	payload: 'Payload',
	payloadQuota: 'Of payload quota',
	forbiddenTitle: 'Admins only',
	forbidden:
		'This page shows every user’s jobs, so it is for admins: users whose app_metadata.role is admin. On a hosted project it is set with the service role (Auth admin API or the Supabase dashboard).',
	localAdmin:
		'This demo runs on the local stack, where there is no Auth service: you can make this visitor an admin here. (Not offered on a hosted project.)',
	signInAsAdmin: 'Sign in as admin',
	back: 'Back to the dashboard',
	errorTitle: 'Something went wrong',
};

export type AdminMessages = typeof en;

const pt: AdminMessages = {
	title: 'Visão geral dos trabalhos',
	intro:
		'O que as visões de operação de supabase_jobs dizem agora. Só administradores (app_metadata.role = admin) podem ler esta página.',
	generatedAt: 'Em',
	counts: 'Trabalhos por tipo e situação',
	throughput: 'Concluídos por hora (últimos 7 dias)',
	latency: 'Espera na fila e tempo de execução (últimas 24 horas)',
	failures: 'Taxas de falha (últimos 7 dias)',
	topErrors: 'Erros mais frequentes (últimos 7 dias)',
	overrunning: 'Rodando além do previsto para o tipo',
	silent: 'Trabalhos em execução cujo processador silenciou',
	usage: 'Uso por dono (na fila e em execução)',
	none: 'Nada aqui.',
	table: 'Tabela',
	kind: 'Tipo',
	status: 'Situação',
	jobs: 'Trabalhos',
	oldest: 'Mais antigo enfileirado',
	hour: 'Hora',
	started: 'Iniciados',
	waitP50: 'Espera p50',
	waitP95: 'Espera p95',
	done: 'Concluídos',
	runP50: 'Execução p50',
	runP95: 'Execução p95',
	finished: 'Terminados',
	failed: 'Falharam',
	cancelled: 'Cancelados',
	failureRate: 'Taxa de falha',
	rank: '#',
	error: 'Erro',
	lastSeen: 'Visto por último',
	job: 'Trabalho',
	owner: 'Dono',
	runningFor: 'Rodando há',
	expectedWithin: 'Previsto em até',
	progress: 'Progresso',
	silentFor: 'Em silêncio há',
	beatsMissed: 'Batidas perdidas',
	reclaimableAt: 'Recuperável em',
	queued: 'Na fila',
	running: 'Em execução',
	activeQuota: 'Da cota de ativos',
	payload: 'Carga',
	payloadQuota: 'Da cota de carga',
	forbiddenTitle: 'Só para administradores',
	forbidden:
		'Esta página mostra os trabalhos de todos os usuários, por isso é para administradores: usuários ' +
		'cujo app_metadata.role é admin. Num projeto hospedado, ele é definido com a service role (API de administração do Auth ou o painel do Supabase).',
	localAdmin:
		'Esta demonstração roda na pilha local, onde não há serviço de Auth: você pode tornar este visitante administrador aqui. (Não é oferecido num projeto hospedado.)',
	signInAsAdmin: 'Entrar como administrador',
	back: 'Voltar ao painel',
	errorTitle: 'Algo deu errado',
};

/**
 * The /admin page's sentences for a locale tag.
 *
 * @example
 * adminMessages('pt-BR').title; // 'Visão geral dos trabalhos'
 */
export function adminMessages(tag: string | null | undefined): AdminMessages {
	return resolveJobLocale(tag ?? 'en') === 'pt-BR' ? pt : en;
}
