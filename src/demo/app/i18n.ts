/**
 * The demo's own sentences, in English and Brazilian Portuguese. The
 * package's components carry their own (supabase-jobs/svelte messages); these
 * are the page around them. The language comes from Accept-Language on the
 * server and navigator.language in the browser.
 */
import { resolveJobLocale, type JobLocale } from 'supabase-jobs/svelte';
import { MAX_DOCUMENT_SIZE } from '../analysis/document.ts';

/**
 * Picks en or pt-BR from an Accept-Language header, honouring q-values.
 *
 * @example
 * localeFromAcceptLanguage('pt-BR,pt;q=0.9,en;q=0.8'); // 'pt-BR'
 */
export function localeFromAcceptLanguage(header: string | null | undefined): JobLocale {
	const ranked = (header ?? '')
		.split(',')
		.map((part) => {
			const [tag, ...params] = part.trim().split(';');
			const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean);
			return { tag: (tag ?? '').trim(), q: q === undefined ? 1 : Number(q) };
		})
		.filter((x) => x.tag && x.tag !== '*' && x.q > 0)
		.sort((a, b) => b.q - a.q);
	for (const { tag } of ranked) {
		const lang = tag.toLowerCase().split('-')[0];
		if (lang === 'pt' || lang === 'en') return resolveJobLocale(tag);
	}
	return 'en';
}

const en = {
	title: 'supabase-jobs demo',
	tagline: 'Upload a document and watch it being read. Cancel if it takes too long.',
	upload: 'Analyse a document',
	fileLabel: 'Document',
	uploadHint: `Text, Markdown or PDF, up to ${MAX_DOCUMENT_SIZE}.`,
	uploadButton: 'Upload and analyse',
	uploading: 'Uploading…',
	chooseFile: 'Choose a file first.',
	tooLarge: `The file is larger than ${MAX_DOCUMENT_SIZE}.`,
	recent: 'Recent jobs',
	kind: 'Kind',
	status: 'Status',
	all: 'All',
	noJobs: 'No jobs yet.',
	noMatch: 'No jobs match this filter.',
	showAll: 'Show all',
	open: 'Open',
	job: 'Job',
	back: 'Back to the dashboard',
	openResult: 'Open the result',
	result: 'Analysis',
	summary: 'Summary',
	keywords: 'Keywords',
	words: 'Words',
	sentences: 'Sentences',
	characters: 'Characters',
	pages: 'Pages',
	chunks: 'Sections read',
	reading: 'Reading time',
	language: 'Language',
	notFound: 'Not found (or not yours).',
	jobNotFound: 'This job does not exist, or it belongs to someone else.',
	errorTitle: 'Something went wrong',
	errorText: 'The page could not be shown. Try again in a moment.',
	you: 'You are visitor',
	newVisitor: 'Start over as a new visitor',
	stages: { extract: 'Extracting text', analyse: 'Analysing', summarise: 'Summarising' } as Record<string, string>,
	liveSummary: 'Summary, as it is written',
	documentSize: (pages: number | null, characters: number, sections: number) =>
		`${pages === null ? '' : `${pages} ${pages === 1 ? 'page' : 'pages'} · `}${characters.toLocaleString('en')} characters · ${sections} ${sections === 1 ? 'section' : 'sections'}`,
	created: 'Created',
	seconds: (n: number) => (n < 60 ? `${n} s` : `${Math.round(n / 60)} min`),
};

export type DemoMessages = typeof en;

const pt: DemoMessages = {
	title: 'demo do supabase-jobs',
	tagline: 'Envie um documento e acompanhe a leitura. Cancele se demorar demais.',
	upload: 'Analisar um documento',
	fileLabel: 'Documento',
	uploadHint: `Texto, Markdown ou PDF, até ${MAX_DOCUMENT_SIZE}.`,
	uploadButton: 'Enviar e analisar',
	uploading: 'Enviando…',
	chooseFile: 'Escolha um arquivo primeiro.',
	tooLarge: `O arquivo tem mais de ${MAX_DOCUMENT_SIZE}.`,
	recent: 'Trabalhos recentes',
	kind: 'Tipo',
	status: 'Situação',
	all: 'Todos',
	noJobs: 'Nenhum trabalho ainda.',
	noMatch: 'Nenhum trabalho corresponde a este filtro.',
	showAll: 'Mostrar todos',
	open: 'Abrir',
	job: 'Trabalho',
	back: 'Voltar ao painel',
	openResult: 'Abrir o resultado',
	result: 'Análise',
	summary: 'Resumo',
	keywords: 'Palavras-chave',
	words: 'Palavras',
	sentences: 'Frases',
	characters: 'Caracteres',
	pages: 'Páginas',
	chunks: 'Seções lidas',
	reading: 'Tempo de leitura',
	language: 'Idioma',
	notFound: 'Não encontrado (ou não é seu).',
	jobNotFound: 'Este trabalho não existe, ou pertence a outra pessoa.',
	errorTitle: 'Algo deu errado',
	errorText: 'Não foi possível mostrar a página. Tente de novo em instantes.',
	you: 'Você é o visitante',
	newVisitor: 'Recomeçar como novo visitante',
	stages: { extract: 'Extraindo o texto', analyse: 'Analisando', summarise: 'Resumindo' },
	liveSummary: 'Resumo, enquanto é escrito',
	documentSize: (pages: number | null, characters: number, sections: number) =>
		`${pages === null ? '' : `${pages} ${pages === 1 ? 'página' : 'páginas'} · `}${characters.toLocaleString('pt-BR')} caracteres · ${sections} ${sections === 1 ? 'seção' : 'seções'}`,
	created: 'Criado',
	seconds: (n: number) => (n < 60 ? `${n} s` : `${Math.round(n / 60)} min`),
};

/**
 * The demo's sentences for a locale tag.
 *
 * @example
 * demoMessages('pt-BR').upload; // 'Analisar um documento'
 */
export function demoMessages(tag: string | null | undefined): DemoMessages {
	return resolveJobLocale(tag ?? 'en') === 'pt-BR' ? pt : en;
}

/**
 * A date and time as every page of the demo shows it: one format throughout,
 * the one the components use for a scheduled start on another day.
 *
 * @example
 * formatWhen(new Date('2026-12-01T14:05:00'), 'en'); // 'Dec 1, 2026, 2:05 PM'
 */
export function formatWhen(at: Date, tag: string | null | undefined): string {
	return new Intl.DateTimeFormat(resolveJobLocale(tag ?? 'en'), { dateStyle: 'medium', timeStyle: 'short' }).format(at);
}

/**
 * A language's name in the reader's language, from its code ('en', 'pt').
 *
 * @example
 * languageName('en', 'pt-BR'); // 'inglês'
 */
export function languageName(code: string, tag: string | null | undefined): string {
	try {
		return new Intl.DisplayNames([resolveJobLocale(tag ?? 'en')], { type: 'language' }).of(code) ?? code;
	} catch {
		return code; // not a language code Intl knows
	}
}
