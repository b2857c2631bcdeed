/**
 * Child processes of the demo stack: spawned with their output followed line
 * by line, waited on for a "ready" line, and stopped by their own pid (never
 * by name), so Ctrl-C leaves nothing behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Child {
	name: string;
	process: ChildProcess;
	lines: string[];
	/** Resolves with the first line matching `pattern`; rejects if the process exits first or on timeout. */
	waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	/** SIGTERM now (synchronous: safe inside a signal handler). */
	kill(): void;
	/** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. */
	stop(graceMs?: number): Promise<void>;
}

/** Lines of output, and waits for one matching a pattern; shared by a child and its supervisor. */
export class LineLog {
	readonly lines: string[] = [];
	#waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];

	push(line: string): void {
		this.lines.push(line);
		if (this.lines.length > 2000) this.lines.splice(0, 1000);
		for (const w of [...this.#waiters]) {
			if (w.pattern.test(line)) {
				this.#waiters.splice(this.#waiters.indexOf(w), 1);
				w.resolve(line);
			}
		}
	}

	/** The first line (already seen or to come) matching `pattern`; rejects on timeout or when `gone` settles first. */
	waitFor(name: string, pattern: RegExp, timeoutMs: number, gone: Promise<string> | null): Promise<string> {
		const seen = this.lines.find((l) => pattern.test(l));
		if (seen) return Promise.resolve(seen);
		return new Promise<string>((resolve, reject) => {
			const timer = setTimeout(
				() =>
					reject(new Error(`${name}: no line matching ${pattern} within ${timeoutMs} ms:\n${this.lines.join('\n')}`)),
				timeoutMs,
			);
			this.#waiters.push({
				pattern,
				resolve: (line) => {
					clearTimeout(timer);
					resolve(line);
				},
			});
			void gone?.then((why) => {
				clearTimeout(timer);
				reject(new Error(`${name} ${why} before a line matching ${pattern}:\n${this.lines.join('\n')}`));
			});
		});
	}
}

export function startChild(
	name: string,
	command: string,
	args: string[],
	options: { cwd: string; env: NodeJS.ProcessEnv; echo?: (line: string) => void },
): Child {
	const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
	const log = new LineLog();
	const onLine = (line: string) => {
		log.push(line);
		options.echo?.(line);
	};
	createInterface({ input: child.stdout! }).on('line', onLine);
	createInterface({ input: child.stderr! }).on('line', onLine);
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
		child.once('exit', (code, signal) => resolve({ code, signal })),
	);
	const alive = () => child.exitCode === null && child.signalCode === null;
	return {
		name,
		process: child,
		lines: log.lines,
		exited,
		waitForLine(pattern, timeoutMs = 60_000) {
			return log.waitFor(
				name,
				pattern,
				timeoutMs,
				exited.then(({ code, signal }) => `exited (${code ?? signal})`),
			);
		},
		kill() {
			if (alive()) child.kill('SIGTERM');
		},
		async stop(graceMs = 5000) {
			if (!alive()) return;
			child.kill('SIGTERM');
			const timer = setTimeout(() => alive() && child.kill('SIGKILL'), graceMs);
			await exited;
			clearTimeout(timer);
		},
	};
}

/** A child kept running by a supervisor (the functions gateway's FunctionIsolates). */
export interface SupervisedChild extends Child {
	/** The incarnation running now. */
	readonly current: Child;
	/** How many times it was started again after dying. */
	readonly restarts: number;
	/** Resolves with the next incarnation once it has been started again. */
	nextStart(): Promise<Child>;
}

/** Runs a command to completion; rejects with its output when it fails. */
export async function run(
	command: string,
	args: string[],
	options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<void> {
	const child = startChild(command, command, args, { cwd: options.cwd, env: options.env ?? process.env });
	const { code, signal } = await child.exited;
	if (code !== 0)
		throw new Error(`${command} ${args.join(' ')} failed (${code ?? signal}):\n${child.lines.slice(-40).join('\n')}`);
}
