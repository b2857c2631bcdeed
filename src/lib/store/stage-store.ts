/**
 * The database side of a StageMap: atomic, fenced stage writes through the
 * stage_* SQL functions. StageMap agrees with you on column names; StageStore
 * writes them so that ownership is decided in one statement by the database,
 * not by a record read minutes before.
 */
import type { StageMap } from '../toolkit/stage-map.ts';
import type { CancelOutcome } from '../toolkit/stage-map.ts';
import type { JobAdapter } from './adapter.ts';

/**
 * Options of {@link StageStore}.
 */
export interface StageStoreOptions {
	/** The record table carrying the stage columns, e.g. `documents` or `app.documents`. */
	table: string;
	/** Its key column. @default 'id' */
	idColumn?: string;
}

/**
 * How a run ends. Marking without a result keeps the previous result.
 */
export interface StageFinish {
	status: 'done' | 'failed';
	/**
	 * Text, or any JSON-able value (stored with the result column's type). Omit
	 * it to keep the previous result; `null` clears it, as `StageMap.mark` does.
	 */
	result?: unknown;
	/** Why it failed, for the user. */
	error?: string | null;
}

/**
 * Fenced stage writes on a record: `start` takes the stage and returns the
 * run's token; `finish` lands only while the stage is still running under that
 * token (an old run can never overwrite a newer run's result, even when both
 * saw `running`); `cancel` stops running stages and ignores finished ones.
 *
 * The token column is what tells an old run from a newer one. A table with
 * three columns per stage only (status, error, result) works too: `finish` then
 * lands while the stage is still `running`, whichever run started it.
 *
 * @example
 * ```ts
 * import { JobStore, StageMap, StageStore, postgresAdapter } from 'supabase-jobs';
 *
 * const STAGES = new StageMap(['summary', 'suggestions'], { prefix: 'doc_' });
 * const stages = new StageStore(postgresAdapter(sql), STAGES, { table: 'documents' });
 *
 * const token = await stages.start(doc.id, 'summary');
 * const summary = await summarize(doc.text);
 * if (!(await stages.finish(doc.id, 'summary', token, { status: 'done', result: summary }))) {
 *   // Cancelled, or restarted by a newer run: this run's result is not wanted.
 * }
 * ```
 */
export class StageStore {
	readonly #adapter: JobAdapter;
	readonly #map: StageMap;
	readonly #table: string;
	readonly #idColumn: string;

	constructor(adapter: JobAdapter, map: StageMap, options: StageStoreOptions) {
		this.#adapter = adapter;
		this.#map = map;
		this.#table = options.table;
		this.#idColumn = options.idColumn ?? 'id';
	}

	/**
	 * Marks the stage running with a fresh fencing token and returns it. A newer
	 * start supersedes every older run. Throws JobNotFoundError when the record
	 * does not exist or is not the caller's.
	 *
	 * @example
	 * ```ts
	 * const token = await stages.start(doc.id, 'summary');
	 * ```
	 */
	async start(recordId: string | number, stage: string): Promise<string> {
		const cols = this.#map.columns(stage);
		const token = await this.#adapter.call('stage_start', {
			record_table: this.#table,
			record_id: String(recordId),
			status_column: cols.status,
			token_column: cols.token,
			error_column: cols.error,
			id_column: this.#idColumn,
			token_optional: !this.#map.tokenDeclared,
		});
		return String(token);
	}

	/**
	 * Writes the run's outcome if the stage is still its own; returns false (not
	 * an error) when it is not: the user cancelled, or a newer run restarted it.
	 *
	 * @example
	 * ```ts
	 * const landed = await stages.finish(doc.id, 'summary', token, { status: 'failed', error: 'The model is unavailable.' });
	 * ```
	 */
	async finish(recordId: string | number, stage: string, token: string, outcome: StageFinish): Promise<boolean> {
		const cols = this.#map.columns(stage);
		const result =
			outcome.result === undefined || outcome.result === null
				? null
				: typeof outcome.result === 'string'
					? outcome.result
					: JSON.stringify(outcome.result);
		const written = await this.#adapter.call('stage_finish', {
			record_table: this.#table,
			record_id: String(recordId),
			status_column: cols.status,
			token_column: cols.token,
			token,
			status: outcome.status,
			result_column: cols.result,
			result,
			error_column: cols.error,
			error: outcome.error ?? null,
			id_column: this.#idColumn,
			token_optional: !this.#map.tokenDeclared,
			clear_result: outcome.result === null,
		});
		return written === true;
	}

	/**
	 * Cancels the running stages among `stages` (all by default) in one
	 * statement; a finished or never-run stage lands in `ignored`.
	 *
	 * @example
	 * ```ts
	 * const { cancelled, ignored } = await stages.cancel(doc.id);
	 * ```
	 */
	async cancel(recordId: string | number, stages: readonly string[] = this.#map.stages): Promise<CancelOutcome> {
		this.#map.checkStageList(stages);
		const spec = stages.map((stage) => ({ stage, status: this.#map.columns(stage).status }));
		const outcome = (await this.#adapter.call('stage_cancel', {
			record_table: this.#table,
			record_id: String(recordId),
			stages: spec as unknown as { readonly [key: string]: unknown },
			id_column: this.#idColumn,
		})) as { cancelled: string[]; ignored: string[] };
		return { cancelled: [...outcome.cancelled], ignored: [...outcome.ignored] };
	}
}
