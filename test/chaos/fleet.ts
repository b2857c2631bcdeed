/**
 * The processes of the chaos run, each kept running as a supervisor (systemd,
 * the edge runtime) would: Node runner processes (runWorkers), Deno function
 * instances (functions/jobs-worker's serve), the stand-in and the pg_net
 * dispatcher. Whatever ends a process — a SIGKILL of the run, or a crash of
 * its own — it is started again at once. Every incarnation has its own name
 * (`node-2#5`), which workers write into chaos.runs, and the moment it ended,
 * so a run that never wrote its end is known to have ended then.
 */
import { resolve } from 'node:path';
import { startChild, type Child } from '../../src/local/demo/processes.ts';
import { freePort } from '../../src/local/postgres/embedded.ts';
import { printedRunEnd, type PrintedRunEnd } from './kinds.ts';

export type ProcessKind = 'node' | 'deno' | 'standin' | 'dispatcher';

export interface Incarnation {
	name: string;
	kind: ProcessKind;
	child: Child;
	/** Where it serves (Deno instances, the stand-in). */
	url: string | null;
	/** Epoch ms it was seen ready; null until then. */
	readyAt: number | null;
	/** Epoch ms it ended; null while alive. */
	endedAt: number | null;
	/** True when the run killed it; false when it died by itself. */
	killed: boolean;
}

interface Launch {
	child: Child;
	url: string | null;
	ready: RegExp;
}

class Slot {
	count = 0;
	current: Incarnation | null = null;
	ready: Promise<void> = Promise.resolve();
	stopping = false;

	constructor(
		readonly name: string,
		readonly kind: ProcessKind,
		readonly launch: (incarnation: string) => Promise<Launch>,
		readonly fleet: Fleet,
	) {}

	/**
	 * Starts an incarnation and resolves once one is ready. One that dies
	 * before it is ready (its database is restarting, say) is started again
	 * here as soon as it has exited, as a supervisor would; one that dies
	 * after it was ready is started again by its exit handler.
	 */
	start(): Promise<void> {
		this.ready = (async () => {
			while (!this.stopping) {
				const { incarnation, ready } = await this.#launch();
				try {
					await incarnation.child.waitForLine(ready, 90_000);
					incarnation.readyAt = Date.now();
					return;
				} catch {
					if (incarnation.endedAt === null) {
						// Alive but never ready: put down, and counted as a crash by nobody.
						incarnation.killed = true;
						incarnation.child.process.kill('SIGKILL');
					}
					// Started again once this one is gone (a process starts in about a second: no busy loop).
					await incarnation.child.exited;
				}
			}
		})();
		return this.ready;
	}

	async #launch(): Promise<{ incarnation: Incarnation; ready: RegExp }> {
		const name = `${this.name}#${++this.count}`;
		const { child, url, ready } = await this.launch(name);
		const incarnation: Incarnation = {
			name,
			kind: this.kind,
			child,
			url,
			readyAt: null,
			endedAt: null,
			killed: false,
		};
		this.current = incarnation;
		this.fleet.incarnations.push(incarnation);
		void child.exited.then(({ code, signal }) => {
			incarnation.endedAt ??= Date.now();
			if (this.stopping || incarnation.killed) return;
			this.fleet.crashes.push(`${name} exited by itself (${code ?? signal}): ${child.lines.slice(-6).join(' | ')}`);
			// Died after it was ready: started again, as a supervisor would.
			if (incarnation.readyAt !== null) void this.start();
		});
		return { incarnation, ready };
	}

	/** SIGKILL, then started again; resolves once the new incarnation is ready. */
	async kill(): Promise<Incarnation> {
		await this.ready;
		const victim = this.current!;
		victim.killed = true;
		victim.endedAt = Date.now();
		victim.child.process.kill('SIGKILL');
		await victim.child.exited;
		await this.start();
		return victim;
	}

	async stop(): Promise<void> {
		this.stopping = true;
		await this.ready.catch(() => {});
		await this.current?.child.stop(2000);
	}
}

export interface FleetOptions {
	databaseUrl: string;
	workerSecret: string;
	jwtSecret: string;
	nodeRunners: number;
	denoInstances: number;
	concurrency: number;
	heartbeatMs: number;
	echo?: (line: string) => void;
}

export class Fleet {
	readonly incarnations: Incarnation[] = [];
	/** Processes that died by themselves, with their last lines. */
	readonly crashes: string[] = [];
	/** Ends of runs the workers printed because the database could not take them (it was restarting). */
	readonly printedRunEnds: PrintedRunEnd[] = [];
	readonly #options: FleetOptions;
	readonly #workers: Slot[];
	#standin: Slot | null = null;
	#dispatcher: Slot | null = null;
	#turn = 0;
	#kills = 0;

	constructor(options: FleetOptions) {
		this.#options = options;
		this.#workers = [
			...Array.from({ length: options.nodeRunners }, (_, i) => this.#slot(`node-${i + 1}`, 'node')),
			...Array.from({ length: options.denoInstances }, (_, i) => this.#slot(`deno-${i + 1}`, 'deno')),
		];
	}

	async startWorkers(): Promise<void> {
		await Promise.all(this.#workers.map((slot) => slot.start()));
	}

	/** Starts the stand-in on `port` (kept across restarts) routing the function to `functionsUrl`, and the dispatcher. */
	async startServices(port: number, functionsUrl: string): Promise<string> {
		this.#standin = this.#slot('standin', 'standin', { PORT: String(port), FUNCTIONS_URL: functionsUrl });
		this.#dispatcher = this.#slot('dispatcher', 'dispatcher');
		await Promise.all([this.#standin.start(), this.#dispatcher.start()]);
		return `http://127.0.0.1:${port}`;
	}

	/** The base URL of a live Deno instance, taking turns; null when none is up. */
	nextFunctionUrl(): string | null {
		const live = this.#workers.filter((s) => s.kind === 'deno' && s.current?.readyAt && s.current.endedAt === null);
		if (live.length === 0) return null;
		return live[this.#turn++ % live.length]!.current!.url;
	}

	/**
	 * SIGKILLs a worker and starts it again; resolves once the new incarnation
	 * is ready. One of `busy` (incarnations holding a job) when any is alive,
	 * else any: a worker killed mid-job is the fault that matters.
	 */
	async killWorker(random: () => number, busy: ReadonlySet<string> = new Set()): Promise<Incarnation> {
		// Node runners and Deno instances in turn (where there are both), so both kinds die.
		const kind = this.#kills++ % 2 === 0 ? 'node' : 'deno';
		const ofKind = this.#workers.filter((s) => s.kind === kind);
		const candidates = ofKind.length > 0 ? ofKind : this.#workers;
		const holding = candidates.filter((s) => s.current && busy.has(s.current.name));
		const pool = holding.length > 0 ? holding : candidates;
		return await pool[Math.floor(random() * pool.length)]!.kill();
	}

	/** SIGKILLs the stand-in (REST and Realtime) and starts it again on its port. */
	async restartStandin(): Promise<Incarnation> {
		return await this.#standin!.kill();
	}

	kills(kind: ProcessKind): number {
		return this.incarnations.filter((i) => i.kind === kind && i.killed).length;
	}

	/** When each incarnation that is gone ended (epoch ms), by name. */
	endTimes(): Map<string, number> {
		return new Map(this.incarnations.filter((i) => i.endedAt !== null).map((i) => [i.name, i.endedAt!]));
	}

	async stopAll(): Promise<void> {
		await Promise.all([...this.#workers, this.#standin, this.#dispatcher].map((slot) => slot?.stop()));
	}

	#slot(name: string, kind: ProcessKind, extra: Record<string, string> = {}): Slot {
		const o = this.#options;
		return new Slot(
			name,
			kind,
			async (incarnation) => {
				const echo = (line: string) => {
					const end = printedRunEnd(line);
					if (end) this.printedRunEnds.push(end);
					o.echo?.(`[${incarnation}] ${line}`);
				};
				const env: NodeJS.ProcessEnv = {
					...process.env,
					...extra,
					CHAOS_WORKER: incarnation,
					NO_COLOR: '1',
					DATABASE_URL: o.databaseUrl,
					JWT_SECRET: o.jwtSecret,
				};
				const node = (script: string, args: string[] = []) =>
					startChild(incarnation, process.execPath, ['--import', 'tsx', script, ...args], {
						cwd: resolve('.'),
						env,
						echo,
					});
				if (kind === 'node') {
					env.CHAOS_CONCURRENCY = String(o.concurrency);
					env.CHAOS_HEARTBEAT_MS = String(o.heartbeatMs);
					return { child: node('test/chaos/fixtures/node-runner.ts'), url: null, ready: /chaos-runner .*: started/ };
				}
				if (kind === 'standin')
					return {
						child: node('test/chaos/fixtures/services.ts', ['standin']),
						url: null,
						ready: /standin listening/,
					};
				if (kind === 'dispatcher')
					return {
						child: node('test/chaos/fixtures/services.ts', ['dispatcher']),
						url: null,
						ready: /dispatcher started \(pg_net: true, cron: false\)/,
					};
				const port = await freePort();
				const child = startChild(
					incarnation,
					resolve('node_modules/.bin/deno'),
					['run', '-A', '--config', 'functions/jobs-worker/deno.json', 'test/chaos/fixtures/deno-worker.ts'],
					{
						cwd: resolve('.'),
						env: {
							...env,
							DENO_NO_UPDATE_CHECK: '1',
							SUPABASE_DB_URL: o.databaseUrl,
							JOBS_WORKER_SECRET: o.workerSecret,
							PORT: String(port),
							// No isolate wall clock: this run is what kills these instances (SIGKILL at random
							// moments, as a wall-clock or CPU kill does: no finally), and a 150 s budget would
							// hand jobs back mid-run on its own schedule. The hand-back before the wall clock and
							// the gateway's kills are held by test/worker/hosted-limits.test.ts.
							JOBS_WORKER_WALL_CLOCK_MS: 'Infinity',
							JOBS_WORKER_CONCURRENCY: String(o.concurrency),
							JOBS_WORKER_HEARTBEAT_MS: String(o.heartbeatMs),
							JOBS_WORKER_TICK_MS: '250',
							JOBS_WORKER_RETRY_BASE_SECONDS: '0.5',
						},
						echo,
					},
				);
				return { child, url: `http://127.0.0.1:${port}`, ready: /jobs-worker listening on/ };
			},
			this,
		);
	}
}
