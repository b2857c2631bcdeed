/**
 * The operator overview as the demo's /admin page shows it: row types of the
 * views from the generated src/lib/database.types.ts, and how their intervals
 * read. Shared by the server load and the page.
 */
import type { JobsDatabase } from 'supabase-jobs';

type View<V extends keyof JobsDatabase['supabase_jobs']['Views']> = JobsDatabase['supabase_jobs']['Views'][V]['Row'];

/**
 * The operator views, row types as Supabase's generator read them from the
 * migrations (src/lib/database.types.ts). Intervals arrive as PostgreSQL
 * prints them ('00:00:01.5'), numerics as numbers.
 */
export interface AdminOverview {
	generated_at: string;
	job_counts: View<'job_counts'>[];
	job_throughput_hourly: View<'job_throughput_hourly'>[];
	job_latency: View<'job_latency'>[];
	job_failure_rates: View<'job_failure_rates'>[];
	job_top_errors: View<'job_top_errors'>[];
	jobs_overrunning: View<'jobs_overrunning'>[];
	jobs_silent: View<'jobs_silent'>[];
	owner_usage: View<'owner_usage'>[];
}

/**
 * An interval as PostgreSQL prints it ('1 day 02:03:04.5', '00:00:00.25'), in seconds; null when absent.
 *
 * @example
 * intervalSeconds('00:01:30.5'); // 90.5
 */
export function intervalSeconds(value: string | null | unknown): number | null {
	if (typeof value !== 'string') return null;
	const m = /^(?:(-?\d+) days? ?)?(-?)(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(value.trim());
	if (!m) return null;
	const [, days, sign, h, min, s] = m;
	const clock = Number(h) * 3600 + Number(min) * 60 + Number(s);
	return Number(days ?? 0) * 86400 + (sign === '-' ? -clock : clock);
}

/**
 * A duration for a person: ms under a second, then s, min, h.
 *
 * @example
 * formatSeconds(90.5, 'en'); // '1.5 min'
 */
export function formatSeconds(seconds: number | null, locale: string): string {
	if (seconds === null) return '–';
	const n = (v: number, unit: string) => `${v.toLocaleString(locale, { maximumFractionDigits: 1 })} ${unit}`;
	if (Math.abs(seconds) < 1) return n(seconds * 1000, 'ms');
	if (Math.abs(seconds) < 120) return n(seconds, 's');
	if (Math.abs(seconds) < 7200) return n(seconds / 60, 'min');
	return n(seconds / 3600, 'h');
}
