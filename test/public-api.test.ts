/**
 * The public surface, entry by entry. Each entry's export names are written
 * out here: a new export (or a lost one) fails this test until the list is
 * changed, so it is a decision seen in review. The main entry stays small
 * (what an app calls) and never drags in Svelte, Kit or `node:` modules, so
 * Deno and browsers import it.
 */
import { readFile } from 'node:fs/promises';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ENTRIES: Record<string, { file: string; values: string[]; types: string[] }> = {
	'supabase-jobs': {
		file: 'src/lib/index.ts',
		values: [
			'DatabaseError',
			'IllegalTransitionError',
			'InvalidJobInputError',
			'JOB_STATUSES',
			'JobAlreadyFinishedError',
			'JobCancelledError',
			'JobError',
			'JobNotFoundError',
			'JobNotRunningError',
			'JobStatus',
			'JobStore',
			'NoOpenQuestionError',
			'NotRetryableError',
			'PermissionDeniedError',
			'QuotaExceededError',
			'StageInterruptedError',
			'StaleAfterRequiredError',
			'TERMINAL_JOB_STATUSES',
			'TimeoutError',
			'UnknownJobTableError',
			'cronProblem',
			'defineJobKind',
			'defineSchedule',
			'describeCron',
			'isJobError',
			'isTerminalStatus',
			'postgresAdapter',
			'serverRealtime',
			'supabaseAdapter',
			'supabaseRealtime',
		],
		types: [
			'AskedQuestion',
			'CancelManyFilter',
			'CancelOptions',
			'ChildInput',
			'ConcurrencyLimits',
			'DeleteFinishedFilter',
			'EnqueueInput',
			'Enqueued',
			'Job',
			'JobAdapter',
			'JobErrorCode',
			'JobKind',
			'JobKindParams',
			'JobParams',
			'JobSchedule',
			'JobStatusValue',
			'JobStoreOptions',
			'JobStreamChunk',
			'JobStreamRead',
			'JobSummary',
			'JobTimelineEntry',
			'JobsDatabase',
			'ListRecentOptions',
			'LogLevel',
			'LogLine',
			'PostgresAdapterOptions',
			'RateLimit',
			'SupabaseAdapterOptions',
			'WatchOptions',
		],
	},
	'supabase-jobs/worker': {
		file: 'src/lib/worker.ts',
		values: [
			'DEFAULT_PHASE',
			'JobUserError',
			'PhasePlan',
			'ProgressTracker',
			'StageMap',
			'StageStatus',
			'StageStore',
			'StopFlag',
			'WaitingForAnswer',
			'WaitingForChildren',
			'createWorker',
			'defineJobHandler',
			'delay',
			'isWaitingForAnswer',
			'isWaitingForChildren',
			'runCancellable',
		],
		types: [
			'AskOptions',
			'AttemptOptions',
			'ClaimNextOptions',
			'ClaimOptions',
			'CreateWorkerOptions',
			'FailOptions',
			'FromHistoryOptions',
			'JobHandler',
			'JobHandlerContext',
			'JobHandlerOptions',
			'JobHandlerResult',
			'JobOutcome',
			'JobStreamWriter',
			'JobUserErrorOptions',
			'JobWorker',
			'KickReport',
			'KickStop',
			'LocalizedText',
			'PhaseSizes',
			'PhaseSpan',
			'PhaseTiming',
			'PhaseTimings',
			'ProgressTrackerOptions',
			'RetryBackoff',
			'RetryOptions',
			'RunCancellableOptions',
			'RunPhaseOptions',
			'StageColumns',
			'StageFinish',
			'StageMapOptions',
			'StageStatusValue',
			'StageStoreOptions',
			'StageTemplates',
			'SucceedOptions',
			'TickInput',
			'TickUpdate',
			'Ticker',
			'WorkerLogger',
		],
	},
	'supabase-jobs/node': {
		file: 'src/lib/node.ts',
		values: ['runWorkers'],
		types: ['RunWorkersOptions', 'StopOptions', 'WorkerRunner'],
	},
	'supabase-jobs/svelte': {
		file: 'src/lib/svelte/index.ts',
		values: [
			'CancelButton',
			'DASHBOARD_MESSAGES',
			'JOB_MESSAGES',
			'JobList',
			'JobProgress',
			'JobQuestion',
			'JobStatusBadge',
			'JobStream',
			'JobStrip',
			'JobTimeline',
			'JobsDashboard',
			'TryAgainButton',
			'WatchedJob',
			'dashboardMessagesFor',
			'messagesFor',
			'resolveJobLocale',
		],
		types: [
			'AnsweringJob',
			'DashboardEnhance',
			'DashboardMessages',
			'JobListFilter',
			'JobListOptions',
			'JobListPage',
			'JobListSource',
			'JobLocale',
			'JobMessages',
			'JobProgressView',
			'JobSnapshot',
			'JobSnapshotStatus',
			'JobStreamPiece',
			'JobTimelineEntry',
			'JobWatchSource',
			'ListRecentOptions',
			'MaybeGetter',
			'WatchedJobOptions',
		],
	},
	'supabase-jobs/kit': {
		file: 'src/lib/kit.ts',
		values: ['createAdminDashboard', 'httpStatusOf', 'toHttpError'],
		types: [
			'AdminDashboard',
			'AdminDashboardOptions',
			'AdminDashboardStore',
			'DashboardActionName',
			'DashboardActionResult',
			'DashboardFilter',
			'DashboardJob',
			'JobsDashboardData',
		],
	},
	'supabase-jobs/adapter': {
		file: 'src/lib/adapter.ts',
		values: [
			'JOB_FUNCTIONS',
			'JOB_TRANSITIONS',
			'UnexpectedRowError',
			'canTransition',
			'fromPostgresError',
			'jobRowSchema',
			'parseJobRow',
		],
		types: [
			'JobAdapter',
			'JobArgValue',
			'JobCallArgs',
			'JobCallResult',
			'JobFunctionName',
			'JobFunctionSpec',
			'JobRealtimeCapability',
			'JobTopicListener',
			'JobTopicStatus',
			'JobTopicSubscription',
			'JwtClaims',
			'RawRow',
			'SupabaseChannelLike',
			'SupabaseRealtimeClient',
			'SupabaseRpcClient',
		],
	},
};

const files = Object.values(ENTRIES).map((e) => e.file);
const program = ts.createProgram(files, {
	allowImportingTsExtensions: true,
	noEmit: true,
	module: ts.ModuleKind.NodeNext,
	moduleResolution: ts.ModuleResolutionKind.NodeNext,
});
const checker = program.getTypeChecker();

/** An entry's exports, as TypeScript resolves them: values (classes, functions, constants) and types. */
function exportsOf(file: string) {
	const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
	return checker.getExportsOfModule(moduleSymbol).map((exported) => {
		const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
		return { name: exported.name, target, isValue: (target.flags & ts.SymbolFlags.Value) !== 0 };
	});
}

describe('the export names of every entry', () => {
	it.each(Object.entries(ENTRIES))('%s exports exactly its listed names', (_entry, { file, values, types }) => {
		const exported = exportsOf(file);
		expect(
			exported
				.filter((e) => e.isValue)
				.map((e) => e.name)
				.sort(),
		).toEqual(values);
		expect(
			exported
				.filter((e) => !e.isValue)
				.map((e) => e.name)
				.sort(),
		).toEqual(types);
	});

	// What an app calls and the option types it names: the clients an adapter
	// takes are at supabase-jobs/adapter, the shapes of results and of rarer
	// options are read off the store's methods. The cap keeps a new name a decision.
	it('the main entry holds at most 60 names: what an app calls', () => {
		const main = ENTRIES['supabase-jobs']!;
		expect(main.values.length + main.types.length).toBeLessThanOrEqual(60);
		for (const internal of ['fromPostgresError', 'JOB_FUNCTIONS', 'parseJobRow', 'createWorker', 'PhasePlan'])
			expect([...main.values, ...main.types]).not.toContain(internal);
	});

	it('the runtime exports of each entry are its listed values', async () => {
		const modules: Record<string, () => Promise<object>> = {
			'supabase-jobs': () => import('../src/lib/index.ts'),
			'supabase-jobs/worker': () => import('../src/lib/worker.ts'),
			'supabase-jobs/node': () => import('../src/lib/node.ts'),
			'supabase-jobs/kit': () => import('../src/lib/kit.ts'),
			'supabase-jobs/adapter': () => import('../src/lib/adapter.ts'),
		};
		// supabase-jobs/svelte needs the Svelte compiler for its components: test/package imports it built.
		for (const [entry, load] of Object.entries(modules))
			expect(Object.keys(await load()).sort(), entry).toEqual(ENTRIES[entry]!.values);
	});
});

/** The modules an entry loads, transitively (JSDoc examples import things too; only real imports count). */
async function importsOf(entry: string): Promise<Map<string, string[]>> {
	const seen = new Map<string, string[]>();
	const visit = async (file: string) => {
		if (seen.has(file)) return;
		const text = (await readFile(file, 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '');
		const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
		seen.set(file, specs);
		for (const spec of specs) if (spec.startsWith('.')) await visit(new URL(spec, `file://${file}`).pathname);
	};
	await visit(new URL(`../${entry}`, import.meta.url).pathname);
	return seen;
}

describe('what each entry loads', () => {
	it.each(['src/lib/index.ts', 'src/lib/worker.ts', 'src/lib/adapter.ts'])(
		'%s imports neither svelte, @sveltejs/kit nor node: (Deno and browsers load it)',
		async (entry) => {
			const seen = await importsOf(entry);
			for (const [file, specs] of seen)
				for (const spec of specs)
					expect(/^(svelte|@sveltejs\/|node:)/.test(spec), `${file} imports ${spec}`).toBe(false);
			expect(seen.size).toBeGreaterThan(3);
		},
	);
});

describe('documentation where users land', () => {
	it('every exported function, class and constant has JSDoc with an @example; no type carries one', () => {
		const missing: string[] = [];
		const needless: string[] = [];
		for (const [entry, { file }] of Object.entries(ENTRIES)) {
			for (const { name, target, isValue } of exportsOf(file)) {
				// Components document themselves in their <!-- @component --> block, which TypeScript does not read.
				if (target.declarations?.[0]?.getSourceFile().fileName.includes('node_modules/svelte/')) continue;
				const hasExample = target.getJsDocTags(checker).some((t) => t.name === 'example');
				if (isValue && !hasExample) missing.push(`${entry}: ${name}`);
				if (!isValue && hasExample) needless.push(`${entry}: ${name}`);
			}
		}
		expect(missing).toEqual([]);
		expect(needless).toEqual([]);
	});
});
