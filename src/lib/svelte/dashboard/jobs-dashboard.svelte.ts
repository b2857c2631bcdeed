/**
 * The admin dashboard's state: the words in the page's language, what the
 * live region says after an action, which action is on its way (when the
 * forms are enhanced), and the links that keep the filter. The components
 * only lay it out.
 */
import type {
	DashboardActionName,
	DashboardActionResult,
	DashboardFilter,
	JobsDashboardData,
} from './dashboard-data.ts';
import type { KindOverview } from '../../store/store-options.ts';
import { dashboardMessagesFor, fill, type DashboardMessages } from './dashboard-messages.ts';

/** What the page gives the dashboard: the load's data, the last action's answer, the language. */
export interface JobsDashboardProps {
	data: JobsDashboardData;
	form?: DashboardActionResult | null;
	locale?: string | null;
}

export class JobsDashboardView {
	readonly #props: () => JobsDashboardProps;
	/** The action whose enhanced post is on its way, if any. */
	pending = $state<string | null>(null);

	constructor(props: () => JobsDashboardProps) {
		this.#props = props;
	}

	static create(props: () => JobsDashboardProps): JobsDashboardView {
		return new JobsDashboardView(props);
	}

	readonly data = $derived.by(() => this.#props().data);
	readonly m: DashboardMessages = $derived.by(() => dashboardMessagesFor(this.#props().locale ?? 'en'));
	/** Whether the store offers this action (the route lists what it offers). */
	can(action: DashboardActionName): boolean {
		return this.data.actions.includes(action);
	}

	/** The sentence of the live region: what the last action did, or why it did not. */
	readonly result = $derived.by((): string => {
		const form = this.#props().form;
		if (!form || typeof form !== 'object' || !('action' in form)) return '';
		const m = this.m;
		if (!form.ok) return fill(m.refused, { message: form.message });
		const values = {
			n: form.count,
			kind: form.kind ?? '',
			id: shortId(form.jobId),
			newId: shortId(form.newJobId),
		};
		if (form.action === 'cancel') return fill(form.count > 0 ? m.done.cancel.one : m.done.cancel.none, values);
		return fill(m.done[form.action], values);
	});

	/** Paused, rate-limited or active, as the queue table says it. */
	stateOf(kind: KindOverview): string {
		if (kind.pausedAt) return this.m.paused;
		if (kind.rateLimit) return `${this.m.rateLimited} (${this.rateText(kind)})`;
		return this.m.active;
	}

	rateText(kind: KindOverview): string {
		if (!kind.rateLimit) return '–';
		return fill(this.m.rateLimit, {
			starts: kind.rateLimit.starts,
			seconds: +(kind.rateLimit.perMs / 1000).toFixed(3),
		});
	}

	/** A number in the page's language. */
	num(n: number | null | undefined): string {
		return n === null || n === undefined ? '–' : n.toLocaleString(this.#props().locale ?? 'en');
	}

	/** A time as `2026-12-01 14:03:07` (UTC, as the headers say). */
	when(iso: string | null | undefined): string {
		return iso ? iso.slice(0, 19).replace('T', ' ') : '–';
	}

	/** The address of the page with a job opened, keeping the filter. */
	linkTo(jobId: string | null): string {
		return filterQuery(this.data.filter, jobId ? { job: jobId } : {}) || '?';
	}

	/** Where an action's form posts: this page, its query kept, `/<action>` added (SvelteKit's named actions). */
	actionUrl(action: string): string {
		const query = this.linkTo(this.data.selected?.job.id ?? null);
		return `${query === '?' ? '?' : `${query}&`}/${action}`;
	}

	/** A `datetime-local` input's value for an ISO time. */
	inputTime(iso: string | undefined): string {
		return iso ? iso.slice(0, 16) : '';
	}

	/** The posted filter, as hidden fields of a bulk form. */
	readonly filterFields = $derived.by(() =>
		Object.entries(this.data.filter).filter((e): e is [string, string] => typeof e[1] === 'string'),
	);
}

/**
 * The last 8 characters of an id: enough to tell jobs apart on a screen. Not
 * the first: ids are time-ordered, so jobs made together share their start.
 */
export function shortId(id: string | null | undefined): string {
	return id ? id.slice(-8) : '';
}

function filterQuery(filter: DashboardFilter, extra: Record<string, string>): string {
	const query = Object.entries({ ...filter, ...extra })
		.filter(([, value]) => value)
		.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
		.join('&');
	return query ? `?${query}` : '';
}

/**
 * SvelteKit's `enhance` from `$app/forms`, or anything shaped like it: the
 * app passes it in, so the forms post without a page load when JavaScript
 * runs (and as plain forms when it does not).
 */
export type DashboardEnhance = (
	form: HTMLFormElement,
	submit?: () => (outcome: { update(options?: { reset?: boolean }): Promise<void> }) => Promise<void>,
) => { destroy(): void };

/** What each part of the dashboard is given: the view, and `enhance` when its forms post in place. */
export interface DashboardPartProps {
	view: JobsDashboardView;
	enhance?: DashboardEnhance | undefined;
}
