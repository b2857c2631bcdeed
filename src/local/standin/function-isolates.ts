/**
 * One function's isolates, kept by the local gateway the way hosted Supabase
 * keeps them (see function-limits.ts for the upstream sources): a process
 * (`deno run` of the function) serves requests until it is retired at half
 * its wall clock (new requests go to a fresh one) and is killed with SIGKILL
 * at its wall clock, or as soon as one request has used more than the CPU
 * limit. Nothing of it runs after the kill: no `finally`, no cleanup. A
 * request still waiting for its answer then gets what the hosted gateway
 * answers (546 WORKER_RESOURCE_LIMIT), and the next request starts a fresh
 * process. When the newest process dies it is started again at once (after
 * a pause that grows while it keeps dying young), as a supervisor would.
 *
 * CPU per request, measured from outside: /proc/<pid>/stat (user + system,
 * all threads, 10 ms steps) sampled every `sampleMs`. A request is charged
 * what the process used from the moment it was forwarded; once answered it
 * stays charged for what follows (its `waitUntil` work) until a later request
 * to the same process is answered. An unanswered request is charged from its
 * own start. The process's start-up is charged to nobody. Hosted measures the
 * isolate's own thread; this also counts Deno's helper threads (GC, I/O), so
 * it errs on the strict side.
 */
import { LineLog, type Child, type SupervisedChild } from '../demo/processes.ts';
import { checkLimits, processCpuMs, type FunctionLimits } from './function-limits.ts';

/** Why the gateway killed an isolate. */
export type IsolateLimit = 'wall_clock' | 'cpu';

/** An isolate the gateway killed. */
export interface IsolateKill {
	pid: number;
	limit: IsolateLimit;
	/** Milliseconds from its start to the kill. */
	ageMs: number;
	/** CPU charged to the request that passed the limit (cpu), or used in all (wall_clock). */
	cpuMs: number;
	/** Date.now() of the kill. */
	at: number;
}

/** A request's hold on an isolate, from the gateway's side. */
export interface IsolateLease {
	url: string;
	pid: number;
	/** Settles with the kill if the gateway kills the isolate while this request is open. */
	killed: Promise<IsolateKill>;
	/** Synchronous: the kill, if it already happened. */
	readonly kill: IsolateKill | null;
	/** The answer's head arrived. */
	answered(): void;
}

export interface FunctionIsolatesOptions {
	name: string;
	/** Starts one isolate (listening on a port of its choice), echoing its output lines. */
	start(echo: (line: string) => void): Child;
	/** The line an isolate prints once it listens; its first group is the URL it listens on. */
	ready: RegExp;
	limits: FunctionLimits;
	/** How often CPU is sampled. @default 50 */
	sampleMs?: number;
	/** How long an isolate may take to listen. @default 60_000 */
	bootMs?: number;
	log?: (line: string) => void;
}

interface Window {
	cpuAt: number;
	answered: boolean;
}

class Isolate {
	readonly startedAt = performance.now();
	readonly windows = new Set<Window>();
	latestAnswered: Window | null = null;
	kill: IsolateKill | null = null;
	dead = false;
	readonly killed: Promise<IsolateKill>;
	resolveKilled!: (kill: IsolateKill) => void;
	readonly timers: ReturnType<typeof setTimeout>[] = [];

	url = '';
	ready: Promise<void> = Promise.resolve();

	constructor(readonly child: Child) {
		this.killed = new Promise((resolve) => (this.resolveKilled = resolve));
	}

	get pid(): number {
		return this.child.process.pid ?? -1;
	}

	/** CPU charged to the request that has used the most (see the module comment). */
	charged(cpuNow: number): number {
		let from = this.latestAnswered?.cpuAt ?? Infinity;
		for (const w of this.windows) if (!w.answered) from = Math.min(from, w.cpuAt);
		return from === Infinity ? 0 : cpuNow - from;
	}
}

/**
 * The isolates of one function. Also a {@link SupervisedChild}: `current` is
 * the process new requests go to, `lines` span every process.
 *
 * @example
 * const worker = new FunctionIsolates({ name: 'worker', start, ready: /listening/, limits: HOSTED_FUNCTION_LIMITS.free });
 * await worker.started();
 * createStandin({ ..., functions: { 'jobs-worker': { isolates: worker, verifyJwt: false } } });
 */
export class FunctionIsolates implements SupervisedChild {
	readonly name: string;
	readonly kills: IsolateKill[] = [];
	/** The most CPU one request has been charged so far, in ms (how close the function runs to the CPU limit). */
	peakCpuMs = 0;
	readonly #o: Required<Omit<FunctionIsolatesOptions, 'log'>> & Pick<FunctionIsolatesOptions, 'log'>;
	readonly #log = new LineLog();
	readonly #live = new Set<Isolate>();
	#current: Isolate;
	#restarts = 0;
	#pauseMs = 200;
	#stopping = false;
	#waiting: ((child: Child) => void)[] = [];
	#resolveExited!: (how: { code: number | null; signal: NodeJS.Signals | null }) => void;
	readonly exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
		(r) => (this.#resolveExited = r),
	);

	constructor(options: FunctionIsolatesOptions) {
		checkLimits(options.limits);
		this.name = options.name;
		this.#o = { sampleMs: 50, bootMs: 60_000, ...options };
		this.#current = this.#spawn();
	}

	get limits(): FunctionLimits {
		return this.#o.limits;
	}

	get lines(): string[] {
		return this.#log.lines;
	}

	get current(): Child {
		return this.#current.child;
	}

	get process() {
		return this.#current.child.process;
	}

	/** How many times a fresh isolate replaced one that died (a retired one replaced is not counted). */
	get restarts(): number {
		return this.#restarts;
	}

	/** Resolves once the newest isolate listens. */
	async started(): Promise<void> {
		await this.#current.ready;
	}

	waitForLine(pattern: RegExp, timeoutMs = 60_000): Promise<string> {
		return this.#log.waitFor(this.name, pattern, timeoutMs, null);
	}

	nextStart(): Promise<Child> {
		return new Promise((resolve) => this.#waiting.push(resolve));
	}

	/**
	 * Takes a request: the isolate it goes to (a fresh one when the newest is
	 * dead or retired), once it listens. Rejects when no isolate could start.
	 */
	async enter(): Promise<IsolateLease> {
		if (this.#stopping) throw new Error(`${this.name}: the function is stopped`);
		if (this.#current.dead || this.#retired(this.#current)) this.#replace(this.#current.dead);
		const isolate = this.#current;
		await isolate.ready;
		const cpuAt = await processCpuMs(isolate.pid);
		if (cpuAt === null || isolate.dead)
			throw new Error(`${this.name}: the isolate ended before the request reached it`);
		const window: Window = { cpuAt, answered: false };
		isolate.windows.add(window);
		return {
			url: isolate.url,
			pid: isolate.pid,
			killed: isolate.killed,
			get kill() {
				return isolate.kill;
			},
			answered: () => {
				if (window.answered) return;
				window.answered = true;
				isolate.windows.delete(window);
				if (!isolate.latestAnswered || isolate.latestAnswered.cpuAt <= window.cpuAt) isolate.latestAnswered = window;
			},
		};
	}

	kill(): void {
		this.#stopping = true;
		for (const isolate of this.#live) isolate.child.kill();
	}

	async stop(graceMs = 5000): Promise<void> {
		this.#stopping = true;
		await Promise.all([...this.#live].map((isolate) => isolate.child.stop(graceMs)));
		// Nothing was left running: `exited` settles all the same.
		this.#resolveExited({ code: null, signal: null });
	}

	/** Past half its wall clock, an isolate takes no new request (edge-runtime retires it then). */
	#retired(isolate: Isolate): boolean {
		return performance.now() - isolate.startedAt >= this.#o.limits.wallClockMs / 2;
	}

	#replace(afterDeath: boolean): void {
		if (afterDeath) this.#restarts++;
		this.#current = this.#spawn();
		const waiting = this.#waiting;
		this.#waiting = [];
		waiting.forEach((resolve) => resolve(this.#current.child));
	}

	#spawn(): Isolate {
		const child = this.#o.start((line) => this.#log.push(line));
		const isolate = new Isolate(child);
		isolate.ready = child.waitForLine(this.#o.ready, this.#o.bootMs).then((line) => {
			const url = this.#o.ready.exec(line)?.[1];
			if (!url) throw new Error(`${this.name}: its ready line names no URL: ${line}`);
			isolate.url = url.replace(/\/$/, '');
		});
		isolate.ready.catch(() => {});
		this.#live.add(isolate);
		this.#watch(isolate);
		return isolate;
	}

	#watch(isolate: Isolate): void {
		const { wallClockMs, cpuMs } = this.#o.limits;
		if (Number.isFinite(wallClockMs)) {
			const timer = setTimeout(() => void this.#killFor(isolate, 'wall_clock'), wallClockMs);
			timer.unref();
			isolate.timers.push(timer);
		}
		if (Number.isFinite(cpuMs)) {
			const sampler = setInterval(() => void this.#sample(isolate, cpuMs), this.#o.sampleMs);
			sampler.unref();
			isolate.timers.push(sampler);
		}
		void isolate.child.exited.then((how) => this.#ended(isolate, how));
	}

	async #sample(isolate: Isolate, limitMs: number): Promise<void> {
		if (isolate.dead) return;
		const now = await processCpuMs(isolate.pid);
		if (now === null) return;
		const charged = isolate.charged(now);
		if (charged > limitMs) return this.#killFor(isolate, 'cpu', charged);
		this.peakCpuMs = Math.max(this.peakCpuMs, charged);
	}

	async #killFor(isolate: Isolate, limit: IsolateLimit, charged?: number): Promise<void> {
		if (isolate.dead || isolate.kill) return;
		const cpuMs = charged ?? (await processCpuMs(isolate.pid)) ?? 0;
		if (isolate.dead || isolate.kill) return;
		const kill: IsolateKill = {
			pid: isolate.pid,
			limit,
			ageMs: Math.round(performance.now() - isolate.startedAt),
			cpuMs,
			at: Date.now(),
		};
		isolate.kill = kill;
		isolate.child.process.kill('SIGKILL');
		this.kills.push(kill);
		const what =
			limit === 'cpu'
				? `CPU time limit reached (${cpuMs} ms of CPU for one request; limit ${this.#o.limits.cpuMs} ms)`
				: `wall clock limit reached (${this.#o.limits.wallClockMs} ms)`;
		const line = `${this.name} isolate ${kill.pid} killed (SIGKILL): ${what}`;
		this.#log.push(line);
		this.#o.log?.(line);
		isolate.resolveKilled(kill);
	}

	#ended(isolate: Isolate, how: { code: number | null; signal: NodeJS.Signals | null }): void {
		isolate.dead = true;
		isolate.timers.forEach((t) => clearTimeout(t));
		this.#live.delete(isolate);
		if (this.#stopping) {
			if (this.#live.size === 0) this.#resolveExited(how);
			return;
		}
		if (isolate !== this.#current) return;
		// The newest isolate died: start a fresh one, pausing longer while they keep dying young.
		const young = performance.now() - isolate.startedAt < 30_000 && !isolate.kill;
		this.#pauseMs = young ? Math.min(this.#pauseMs * 2, 5000) : 200;
		const line = `${this.name} exited (${how.code ?? how.signal}); starting it again in ${this.#pauseMs} ms`;
		this.#o.log?.(line);
		setTimeout(() => {
			if (!this.#stopping && this.#current === isolate) this.#replace(true);
		}, this.#pauseMs).unref();
	}
}
