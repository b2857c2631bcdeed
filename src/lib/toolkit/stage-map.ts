/**
 * Several stages' status columns on the record the interface already shows,
 * written once instead of once per stage.
 */
import { InvalidJobInputError } from '../errors.ts';
import { StageStatus, type StageStatusValue } from './stage-status.ts';

/**
 * Column-name templates; `{prefix}` and `{stage}` are substituted.
 */
export interface StageTemplates {
	/** @default '{prefix}status_{stage}' */
	status: string;
	/** @default '{prefix}error_{stage}' */
	error: string;
	/** @default '{prefix}result_{stage}' */
	result: string;
	/**
	 * The fencing token of the run that owns the stage. @default '{prefix}run_{stage}'
	 *
	 * The default is optional: StageStore fences by token only when the table
	 * has this column, and otherwise (a layout of three columns per stage: status, error, result) by a
	 * compare-and-set on status 'running'. A template given explicitly must exist.
	 */
	token: string;
}

/**
 * The columns one stage resolves to.
 */
export type StageColumns = Readonly<StageTemplates>;

/**
 * Options of {@link StageMap}.
 */
export interface StageMapOptions {
	/** @default '' */
	prefix?: string;
	templates?: Partial<StageTemplates>;
}

/**
 * Options of {@link StageMap.mark}.
 */
export interface MarkOptions {
	/**
	 * Written only when given: marking without a result keeps the previous one.
	 * An explicit `null` clears it (StageStore.finish treats null the same way).
	 */
	result?: unknown;
	/** Why it stopped, for the user. Every mark writes it (null when absent): it describes the latest run. */
	error?: string | null;
	/** For RUNNING: the run's token (from startRun()); a fresh one is made when absent. */
	token?: string;
}

/**
 * What {@link StageMap.cancel} did.
 */
export interface CancelOutcome {
	cancelled: string[];
	ignored: string[];
}

const ROLES = ['status', 'error', 'result', 'token'] as const;
const DEFAULT_TEMPLATES: StageTemplates = {
	status: '{prefix}status_{stage}',
	error: '{prefix}error_{stage}',
	result: '{prefix}result_{stage}',
	token: '{prefix}run_{stage}',
};
const STATUSES: readonly string[] = Object.values(StageStatus);
// PostgreSQL silently truncates longer identifiers, which can merge two columns.
const MAX_IDENTIFIER_BYTES = 63;

type Row = Record<string, unknown>;

/**
 * @example
 * const STAGES = new StageMap(['transcription', 'summary', 'suggestions'], { prefix: 'doc_' });
 * STAGES.columns('summary'); // { status: 'doc_status_summary', error: 'doc_error_summary', result: 'doc_result_summary', token: 'doc_run_summary' }
 */
export class StageMap {
	/** The stages, in the order given. */
	readonly stages: readonly string[];
	/**
	 * True when the token template was given explicitly: the token column is
	 * then required, not merely used when the table has it.
	 */
	readonly tokenDeclared: boolean;
	readonly #columns = new Map<string, StageColumns>();

	/**
	 * Resolves every stage's columns and refuses when two of them would be the
	 * same column: the copy-paste bug nothing else in the stack notices.
	 *
	 * @example
	 * new StageMap(['summary'], { prefix: 'doc_', templates: { status: '{stage}_state_{prefix}' } });
	 */
	constructor(stages: readonly string[], options: StageMapOptions = {}) {
		const prefix = options.prefix ?? '';
		const templates = { ...DEFAULT_TEMPLATES, ...options.templates };
		if (stages.length === 0) throw new RangeError('a StageMap needs at least one stage');
		const owners = new Map<string, { stage: string; role: string }>();
		for (const stage of stages) {
			if (typeof stage !== 'string' || stage === '')
				throw new TypeError(`stage names must be non-empty strings, got ${JSON.stringify(stage)}`);
			if (this.#columns.has(stage)) throw new RangeError(`stage "${stage}" is listed twice`);
			const cols = {} as StageTemplates;
			for (const role of ROLES) {
				const column = templates[role].replaceAll('{prefix}', prefix).replaceAll('{stage}', stage);
				if (new TextEncoder().encode(column).length > MAX_IDENTIFIER_BYTES) {
					throw new RangeError(
						`column "${column}" of stage "${stage}" is longer than PostgreSQL's ${MAX_IDENTIFIER_BYTES}-byte identifier limit`,
					);
				}
				const owner = owners.get(column);
				if (owner) {
					throw new RangeError(
						owner.stage === stage
							? `stage "${stage}" resolves both its ${owner.role} and its ${role} to column "${column}"`
							: `stages "${owner.stage}" and "${stage}" both resolve to column "${column}"`,
					);
				}
				owners.set(column, { stage, role });
				cols[role] = column;
			}
			this.#columns.set(stage, Object.freeze(cols));
		}
		this.stages = Object.freeze([...stages]);
		this.tokenDeclared = options.templates?.token !== undefined;
	}

	/**
	 * Refuses a list of stages naming one twice, before anything is written: a
	 * stage cannot be both cancelled and ignored by one call.
	 *
	 * @example
	 * STAGES.checkStageList(['summary', 'summary']); // InvalidJobInputError: stage "summary" is listed twice
	 */
	checkStageList(stages: readonly string[]): void {
		const seen = new Set<string>();
		for (const stage of stages) {
			this.columns(stage); // unknown names are refused too
			if (seen.has(stage)) {
				throw new InvalidJobInputError(`stage "${stage}" is listed twice`, {
					field: 'stages',
					details: 'field=stages',
					hint: 'Nothing was written.',
				});
			}
			seen.add(stage);
		}
	}

	/**
	 * The columns a stage reads and writes.
	 *
	 * @example
	 * const { status, result } = STAGES.columns('summary');
	 * await sql`select ${sql(status)}, ${sql(result)} from documents where id = ${id}`;
	 */
	columns(stage: string): StageColumns {
		const cols = this.#columns.get(stage);
		if (!cols) throw new RangeError(`unknown stage "${stage}"; the map has ${this.stages.join(', ')}`);
		return cols;
	}

	/**
	 * Every column of every stage, for a select list.
	 *
	 * @example
	 * await sql`select id, ${sql(STAGES.columnNames())} from documents`;
	 */
	columnNames(): string[] {
		return [...this.#columns.values()].flatMap((c) => ROLES.map((r) => c[r]));
	}

	/**
	 * The stage's status on this record; null when it never ran.
	 *
	 * @example
	 * if (STAGES.status(doc, 'summary') === StageStatus.FAILED) showRetry();
	 */
	status(record: object, stage: string): StageStatusValue | null {
		const value = (record as Row)[this.columns(stage).status];
		return typeof value === 'string' && STATUSES.includes(value) ? (value as StageStatusValue) : null;
	}

	/**
	 * The token of the run that last marked the stage running, or null.
	 *
	 * @example
	 * const token = STAGES.token(doc, 'summary');
	 */
	token(record: object, stage: string): string | null {
		const value = (record as Row)[this.columns(stage).token];
		return typeof value === 'string' ? value : null;
	}

	/**
	 * A fresh fencing token (a UUID) for one run of a stage. Store it when
	 * marking running; only the run holding it owns the stage afterwards.
	 *
	 * @example
	 * const token = STAGES.startRun();
	 * STAGES.mark(doc, 'summary', StageStatus.RUNNING, { token });
	 */
	startRun(): string {
		return crypto.randomUUID();
	}

	/**
	 * Writes a stage's status on a plain record (mutating it). Running stores
	 * a run token; the error always describes this mark; the result changes
	 * only when given, so cancelling a regeneration keeps the old answer.
	 *
	 * @example
	 * STAGES.mark(doc, 'summary', StageStatus.DONE, { result: summary });
	 * STAGES.mark(doc, 'summary', StageStatus.FAILED, { error: 'The model is unavailable, try again later.' });
	 */
	mark(record: object, stage: string, status: StageStatusValue, options: MarkOptions = {}): void {
		const cols = this.columns(stage);
		if (!STATUSES.includes(status)) throw new RangeError(`unknown stage status "${String(status)}"; use StageStatus`);
		const row = record as Row;
		row[cols.status] = status;
		row[cols.error] = options.error ?? null;
		if ('result' in options) row[cols.result] = options.result ?? null;
		if (status === StageStatus.RUNNING) row[cols.token] = options.token ?? this.startRun();
	}

	/**
	 * True when the stage still has this status (and, given a token, still
	 * belongs to that run). An ownership check, not only a cancellation
	 * check: a newer run restarting the stage also makes it false. Call it on
	 * a record re-read from the database, not the one loaded before the work.
	 *
	 * @example
	 * const fresh = await loadDocument(id);
	 * if (STAGES.owns(fresh, 'summary', StageStatus.RUNNING, { token })) {
	 *   STAGES.mark(fresh, 'summary', StageStatus.DONE, { result: summary });
	 * }
	 */
	owns(record: object, stage: string, status: StageStatusValue, options: { token?: string } = {}): boolean {
		if (this.status(record, stage) !== status) return false;
		return options.token === undefined || this.token(record, stage) === options.token;
	}

	/**
	 * Cancels the running stages among `stages` (all by default). A stage
	 * that already finished or never ran is ignored, never an error: a screen
	 * will routinely cancel something that completed a moment ago. Results
	 * are kept. There is no cascade: a stage that enqueues the next only on
	 * success never starts it.
	 *
	 * @example
	 * const { cancelled, ignored } = STAGES.cancel(doc, ['summary', 'suggestions'], { reason: 'Cancelled by you.' });
	 */
	cancel(
		record: object,
		stages: readonly string[] = this.stages,
		options: { reason?: string | null } = {},
	): CancelOutcome {
		this.checkStageList(stages); // refuse unknown or repeated names before writing anything
		const outcome: CancelOutcome = { cancelled: [], ignored: [] };
		for (const stage of stages) {
			if (this.status(record, stage) === StageStatus.RUNNING) {
				this.mark(record, stage, StageStatus.CANCELLED, { error: options.reason ?? null });
				outcome.cancelled.push(stage);
			} else {
				outcome.ignored.push(stage);
			}
		}
		return outcome;
	}
}
