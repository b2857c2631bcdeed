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

export function startChild(
	name: string,
	command: string,
	args: string[],
	options: { cwd: string; env: NodeJS.ProcessEnv; echo?: (line: string) => void },
): Child {
	const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
	const lines: string[] = [];
	const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
	const onLine = (line: string) => {
		lines.push(line);
		if (lines.length > 2000) lines.splice(0, 1000);
		options.echo?.(line);
		for (const w of [...waiters]) {
			if (w.pattern.test(line)) {
				waiters.splice(waiters.indexOf(w), 1);
				w.resolve(line);
			}
		}
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
		lines,
		exited,
		waitForLine(pattern, timeoutMs = 60_000) {
			const seen = lines.find((l) => pattern.test(l));
			if (seen) return Promise.resolve(seen);
			return new Promise<string>((resolve, reject) => {
				const timer = setTimeout(
					() => reject(new Error(`${name}: no line matching ${pattern} within ${timeoutMs} ms:\n${lines.join('\n')}`)),
					timeoutMs,
				);
				waiters.push({
					pattern,
					resolve: (line) => {
						clearTimeout(timer);
						resolve(line);
					},
				});
				void exited.then(({ code, signal }) => {
					clearTimeout(timer);
					reject(
						new Error(`${name} exited (${code ?? signal}) before a line matching ${pattern}:\n${lines.join('\n')}`),
					);
				});
			});
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
