/**
 * What the guides' snippets take as given: the parts of an app a snippet
 * imports but the guide does not show (the app's own report renderer,
 * SvelteKit's generated types), laid into the snippets' project before they
 * are type-checked. Shapes only; what the guide shows is checked against the
 * package's real sources in src/lib. Kept as text, not as .ts files, so the
 * repository's own type check never merges them into the demo app's types.
 */
export const SNIPPET_CONTEXT: Readonly<Record<string, string>> = {
	// What a SvelteKit + Supabase app declares in src/app.d.ts: the user's client on locals.
	'src/app.d.ts': `
import type { SupabaseClient } from '@supabase/supabase-js';
declare global {
	namespace App {
		interface Locals {
			supabase: SupabaseClient;
		}
	}
}
export {};
`,
	// What SvelteKit generates for $env/static/public from the project's .env.
	'src/env.d.ts': `
declare module '$env/static/public' {
	export const PUBLIC_SUPABASE_URL: string;
	export const PUBLIC_SUPABASE_PUBLISHABLE_KEY: string;
}
`,
	// What SvelteKit generates as ./$types beside src/routes/+page.server.ts.
	'src/routes/$types.d.ts': `
import type { Actions as KitActions, ServerLoad } from '@sveltejs/kit';
export type Actions = KitActions;
export type PageServerLoad = ServerLoad;
`,
	// The app's own work that the stage-map example calls.
	'src/lib/summarise.ts': `
export declare function summarise(text: string): Promise<string>;
/** A model's summary of \`text\`, token by token (the streamed output example). */
export declare function streamSummary(text: string, signal: AbortSignal): AsyncIterable<string>;
`,
	// The app's own report work that the handler examples call.
	'supabase/functions/jobs-worker/report.ts': `
export interface ReportRow {
	readonly [column: string]: unknown;
}
export declare function loadRows(reportId: string, signal: AbortSignal): Promise<ReportRow[]>;
export declare function renderReport(rows: ReportRow[], format: 'pdf' | 'csv', signal: AbortSignal): Promise<Uint8Array>;
export declare function renderPage(rows: ReportRow[], signal: AbortSignal): Promise<Uint8Array>;
/** Stores the file; returns the id of the row that records it (a uuid: the job's result_id). */
export declare function uploadFile(file: Uint8Array | Uint8Array[], signal: AbortSignal): Promise<string>;
`,
};
