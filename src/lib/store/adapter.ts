/**
 * The one seam between JobStore and a database client. An adapter knows how to
 * call a job_* SQL function and hand back what it returned, raw; JobStore owns
 * every behaviour (validation, parsing, watch, cursors), so two adapters cannot
 * drift apart in anything but transport.
 */
import type { Database } from '../database.types.ts';

/**
 * The SQL functions of the job API (supabase/migrations), with each argument's
 * SQL type in call order and the shape of what comes back:
 * `job` one job row, `jobs` a set of job rows, `status` a job_status scalar,
 * `rows` a set of plain rows, `value` one scalar as JSON (uuid, boolean, jsonb).
 *
 * @example
 * ```ts
 * JOB_FUNCTIONS.job_tick.returns; // 'status'
 * ```
 */
export const JOB_FUNCTIONS = {
	job_enqueue: {
		returns: 'job',
		args: {
			kind: 'text',
			params: 'jsonb',
			payload: 'bytea',
			max_attempts: 'integer',
			locale: 'text',
			owner_id: 'uuid',
			job_table: 'text',
			run_at: 'timestamptz',
			delay: 'interval',
			tags: 'text[]',
			priority: 'integer',
			expire_after: 'interval',
			concurrency_key: 'text',
		},
	},
	job_enqueue_once: {
		returns: 'rows',
		args: {
			kind: 'text',
			idempotency_key: 'text',
			params: 'jsonb',
			payload: 'bytea',
			max_attempts: 'integer',
			locale: 'text',
			owner_id: 'uuid',
			job_table: 'text',
			run_at: 'timestamptz',
			delay: 'interval',
			tags: 'text[]',
			key_ttl: 'interval',
			priority: 'integer',
			expire_after: 'interval',
			concurrency_key: 'text',
		},
	},
	job_enqueue_child: {
		returns: 'job',
		args: {
			parent_id: 'uuid',
			kind: 'text',
			params: 'jsonb',
			payload: 'bytea',
			max_attempts: 'integer',
			locale: 'text',
			job_table: 'text',
			expected_seconds: 'real',
			priority: 'integer',
			tags: 'text[]',
			concurrency_key: 'text',
			owner_id: 'uuid',
		},
	},
	job_children: { returns: 'jobs', args: { parent_id: 'uuid', job_table: 'text' } },
	job_wait_for_children: { returns: 'status', args: { id: 'uuid', attempt: 'integer', job_table: 'text' } },
	job_hold_reasons: { returns: 'rows', args: { ids: 'uuid[]', job_table: 'text' } },
	job_enqueue_many: { returns: 'ids', args: { kind: 'text', items: 'jsonb', job_table: 'text' } },
	job_claim: { returns: 'jobs', args: { id: 'uuid', job_table: 'text', heartbeat_ms: 'integer' } },
	job_claim_next: {
		returns: 'jobs',
		args: { kinds: 'text[]', limit: 'integer', job_table: 'text', heartbeat_ms: 'integer' },
	},
	job_tick: {
		returns: 'status',
		args: {
			id: 'uuid',
			progress: 'real',
			stage: 'text',
			attempt: 'integer',
			job_table: 'text',
			eta_seconds: 'real',
			metadata: 'jsonb',
		},
	},
	job_stream_append: {
		returns: 'status',
		args: { id: 'uuid', stream: 'text', body: 'text', attempt: 'integer', job_table: 'text' },
	},
	job_stream_read: {
		returns: 'value',
		args: { id: 'uuid', attempt: 'integer', from_seq: 'integer', job_table: 'text' },
	},
	job_succeed: {
		returns: 'job',
		args: { id: 'uuid', result_id: 'uuid', attempt: 'integer', timings: 'jsonb', job_table: 'text' },
	},
	job_succeed_many: { returns: 'jobs', args: { items: 'jsonb', job_table: 'text' } },
	job_fail: {
		returns: 'job',
		args: {
			id: 'uuid',
			error: 'text',
			attempt: 'integer',
			error_code: 'text',
			timings: 'jsonb',
			job_table: 'text',
			permanent: 'boolean',
		},
	},
	job_retry: {
		returns: 'job',
		args: { id: 'uuid', error: 'text', delay: 'interval', attempt: 'integer', job_table: 'text' },
	},
	job_release: { returns: 'job', args: { id: 'uuid', attempt: 'integer', job_table: 'text' } },
	job_reschedule: {
		returns: 'job',
		args: { id: 'uuid', run_at: 'timestamptz', delay: 'interval', job_table: 'text' },
	},
	job_cancel: { returns: 'jobs', args: { id: 'uuid', reason: 'text', job_table: 'text' } },
	job_reclaim_stale: { returns: 'jobs', args: { stale_after: 'interval', job_table: 'text' } },
	job_reclaim_silent: { returns: 'jobs', args: { job_table: 'text' } },
	job_set_concurrency: {
		returns: 'value',
		args: { kind: 'text', max_running: 'integer', max_running_per_key: 'integer', job_table: 'text' },
	},
	job_sync_schedules: { returns: 'value', args: { schedules: 'jsonb', job_table: 'text' } },
	job_cancel_many: {
		returns: 'value',
		args: {
			kind: 'text',
			statuses: 'public.job_status[]',
			created_after: 'timestamptz',
			created_before: 'timestamptz',
			owner_id: 'uuid',
			reason: 'text',
			limit: 'integer',
			job_table: 'text',
		},
	},
	job_pause_kind: { returns: 'value', args: { kind: 'text', job_table: 'text' } },
	job_resume_kind: { returns: 'value', args: { kind: 'text', job_table: 'text' } },
	job_set_rate_limit: {
		returns: 'value',
		args: { kind: 'text', starts: 'integer', per_ms: 'integer', job_table: 'text' },
	},
	job_delete_finished: {
		returns: 'value',
		args: {
			ended_before: 'timestamptz',
			kind: 'text',
			statuses: 'public.job_status[]',
			limit: 'integer',
			job_table: 'text',
		},
	},
	job_admin_kinds: { returns: 'rows', args: { job_table: 'text' } },
	job_get: { returns: 'job', args: { id: 'uuid', job_table: 'text' } },
	job_get_many: { returns: 'jobs', args: { ids: 'uuid[]', job_table: 'text' } },
	job_get_status: { returns: 'status', args: { id: 'uuid', attempt: 'integer', job_table: 'text' } },
	job_queue_position: { returns: 'value', args: { id: 'uuid', job_table: 'text' } },
	job_list_recent: {
		returns: 'jobs',
		args: {
			kind: 'text',
			status: 'public.job_status',
			statuses: 'public.job_status[]',
			limit: 'integer',
			cursor: 'text',
			job_table: 'text',
			tags: 'text[]',
		},
	},
	job_log: {
		returns: 'value',
		args: { id: 'uuid', lines: 'jsonb', attempt: 'integer', job_table: 'text', dropped: 'integer' },
	},
	job_timeline: { returns: 'rows', args: { id: 'uuid', job_table: 'text' } },
	job_phase_history: { returns: 'rows', args: { kind: 'text', limit: 'integer', job_table: 'text' } },
	job_ask: {
		returns: 'value',
		args: {
			id: 'uuid',
			key: 'text',
			prompt: 'text',
			answer_schema: 'jsonb',
			timeout: 'interval',
			attempt: 'integer',
			job_table: 'text',
		},
	},
	job_open_question: { returns: 'rows', args: { id: 'uuid', job_table: 'text' } },
	job_answer: { returns: 'job', args: { id: 'uuid', answer: 'jsonb', key: 'text', job_table: 'text' } },
	job_try_again: { returns: 'job', args: { id: 'uuid', job_table: 'text' } },
	job_replay: {
		returns: 'jobs',
		args: {
			kind: 'text',
			error_code: 'text',
			ended_from: 'timestamptz',
			ended_to: 'timestamptz',
			job_table: 'text',
			limit: 'integer',
		},
	},
	stage_start: {
		returns: 'value',
		args: {
			record_table: 'text',
			record_id: 'text',
			status_column: 'text',
			token_column: 'text',
			error_column: 'text',
			id_column: 'text',
			token_optional: 'boolean',
		},
	},
	stage_finish: {
		returns: 'value',
		args: {
			record_table: 'text',
			record_id: 'text',
			status_column: 'text',
			token_column: 'text',
			token: 'uuid',
			status: 'text',
			result_column: 'text',
			result: 'text',
			error_column: 'text',
			error: 'text',
			id_column: 'text',
			token_optional: 'boolean',
			clear_result: 'boolean',
		},
	},
	stage_cancel: {
		returns: 'value',
		args: { record_table: 'text', record_id: 'text', stages: 'jsonb', id_column: 'text' },
	},
} as const satisfies JobFunctionSpecs;

/** The functions of the Data API's schema, as Supabase's generator read them from the migrations. */
type PublicFunctions = Database['public']['Functions'];

/**
 * What JOB_FUNCTIONS must be: only functions the migrations define, each
 * naming exactly the arguments the migration declares (src/lib/database.types.ts,
 * generated), so a migration that adds, renames or drops an argument fails the
 * type check here until the spec follows. The SQL types are the spec's own: the
 * generator gives TypeScript types, and the postgres adapter casts to SQL ones.
 */
type JobFunctionSpecs = {
	readonly [F in keyof PublicFunctions]?: {
		readonly returns: JobFunctionSpec['returns'];
		readonly args: { readonly [A in keyof PublicFunctions[F]['Args']]-?: string };
	};
};

/**
 * How one SQL function is called and what it returns.
 */
export interface JobFunctionSpec {
	/** `ids`: rows of one column, `id` (a batch answers with its ids, not its rows). */
	returns: 'job' | 'jobs' | 'status' | 'rows' | 'ids' | 'value';
	/** Argument name -> SQL type, in declaration order. */
	args: Readonly<Record<string, string>>;
}

/**
 * Name of a job API function.
 */
export type JobFunctionName = keyof typeof JOB_FUNCTIONS;

/**
 * A value JobStore passes as an argument: JSON-able values, bytes for bytea,
 * text for interval (e.g. `'300 seconds'`). `undefined` arguments are left out
 * so the SQL default applies.
 */
export type JobArgValue =
	| string
	| number
	| boolean
	| null
	| Uint8Array
	| readonly string[]
	| readonly { readonly [key: string]: unknown }[]
	| { readonly [key: string]: unknown };

/**
 * Named arguments of one call, keyed as the SQL function names them.
 */
export type JobCallArgs<F extends JobFunctionName> = {
	[K in keyof (typeof JOB_FUNCTIONS)[F]['args']]?: JobArgValue | undefined;
};

/**
 * A row as the database sent it, keyed by column name (snake_case). Timestamps
 * may be ISO strings (keep their microseconds: cursors need them) or Dates;
 * payload may be bytes or PostgREST's `\x...` hex. JobStore parses it.
 */
export type RawRow = Record<string, unknown>;

/**
 * What a call returns: rows for `job`, `jobs`, `rows` and `ids` functions (a single
 * job comes back as an array of one), the bare value for `status`.
 */
export type JobCallResult<F extends JobFunctionName> = (typeof JOB_FUNCTIONS)[F]['returns'] extends 'status' | 'value'
	? unknown
	: RawRow[];

/**
 * A transport for the job API. Implementations: {@link postgresAdapter}
 * (postgres.js) and {@link supabaseAdapter} (supabase-js). Each call must be its
 * own unit of work: nothing may hold a connection or a transaction after the
 * promise settles. Failures must be thrown already translated by
 * `fromPostgresError`, so the same error class comes out of every adapter.
 */
export interface JobAdapter {
	/** For messages and test names, e.g. `'postgres'`, `'supabase'`. */
	readonly name: string;
	/**
	 * Calls `fn` with named `args` (undefined ones omitted) and returns its raw
	 * result. With `answer: 'ids'` a row function is asked only for the ids of
	 * its rows (rows of one column, `id`, as for an `ids` function): an adapter
	 * that cannot narrow the answer may return the whole rows.
	 */
	call<F extends JobFunctionName>(fn: F, args: JobCallArgs<F>, answer?: 'ids'): Promise<JobCallResult<F>>;
	/**
	 * The most rows one reply of a set-returning call carries (PostgREST's
	 * `max_rows`: 1000 on hosted Supabase); absent: no cap. JobStore sends a
	 * batch that writes more rows than this as several calls of at most this
	 * many (enqueueMany, succeedMany, replay), so no reply is ever cut after
	 * its writes committed.
	 */
	readonly maxRows?: number;
	/**
	 * Optional push channel (supabase-js Realtime). When present, `watch` and
	 * `subscribeList` listen instead of polling; a wrapper that only forwards
	 * `call` (like a counting test double) simply leaves it out.
	 */
	readonly realtime?: JobRealtimeCapability;
}

/**
 * The argument entries that were given, in the function's declaration order.
 *
 * @internal
 * @example
 * ```ts
 * definedArgs('job_get', { id, job_table: undefined }); // [['id', 'uuid', id]]
 * ```
 */
export function definedArgs<F extends JobFunctionName>(
	fn: F,
	args: JobCallArgs<F>,
): [name: string, type: string, value: JobArgValue][] {
	const spec = JOB_FUNCTIONS[fn].args as Readonly<Record<string, string>>;
	const given = args as Record<string, JobArgValue | undefined>;
	const out: [string, string, JobArgValue][] = [];
	for (const [name, type] of Object.entries(spec)) {
		const value = given[name];
		if (value !== undefined) out.push([name, type, value]);
	}
	return out;
}

/**
 * How a Realtime topic subscription stands:
 * - `live`: joined and replication ready; every change committed from now on
 *   arrives as a message. Reported again after each rejoin (changes made while
 *   down are not replayed, so a listener re-reads on every `live`);
 * - `down`: the connection or channel was lost after being live, or a join was
 *   refused for a reason that passes (no partition yet, a quota, replication
 *   not ready in time, a join that timed out); the transport joins again by
 *   itself, with a growing wait, and reports `live` again;
 * - `refused`: the topic's policy refused the join (or there is no WebSocket
 *   at all): nothing more will come on this subscription.
 */
export type JobTopicStatus = 'live' | 'down' | 'refused';

/**
 * What {@link JobAdapter.subscribe} reports to. Called synchronously by the
 * transport; keep the work small (queue it, do not await in here).
 */
export interface JobTopicListener {
	/** One broadcast job change: the row's screen columns (snake_case), as the database trigger sent them. */
	message(row: RawRow): void;
	/** One chunk of a job's streamed output (event `job_stream`: id, job_table, stream, attempt, seq, text); optional. */
	stream?(message: RawRow): void;
	status(status: JobTopicStatus, reason?: unknown): void;
}

/**
 * An open topic subscription. `close()` is idempotent and returns at once
 * (the transport leaves the channel in the background).
 */
export interface JobTopicSubscription {
	close(): void;
	/**
	 * True when the topic was already joined as this subscription was made
	 * (another listener holds it): every change committed from now on
	 * arrives, so a read started now misses nothing. The listener still gets
	 * `live`. Absent or false: wait for `live` before trusting the topic.
	 */
	readonly joined?: boolean;
}

/**
 * The optional push capability of a {@link JobAdapter}: Broadcast from
 * Database on private Realtime topics (supabase/schemas/09_realtime.sql):
 * `jobs:<owner_id>` for one user's jobs, `job:<id>` for an ownerless job. JobStore
 * uses it when present and polls otherwise, so product code never branches on
 * the transport.
 */
export interface JobRealtimeCapability {
	/** Joins the private topic (after refreshing the Realtime token) and reports to `listener`. */
	subscribe(topic: string, listener: JobTopicListener): JobTopicSubscription;
	/** The signed-in user's id (the JWT `sub` the topics are authorized with); null for anon and service keys. */
	userId(): Promise<string | null>;
}
