/** A WorkerLogger that keeps every line, and lets a test wait for one. */
import type { WorkerLogger } from '../../../src/lib/worker/logger.ts';

export interface LogLine {
	level: 'info' | 'warn' | 'error';
	message: string;
	details: unknown[];
}

export class RecordingLogger implements WorkerLogger {
	readonly lines: LogLine[] = [];
	#waiters: { test: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];

	#push(level: LogLine['level'], message: string, details: unknown[]) {
		const line = { level, message, details };
		this.lines.push(line);
		if (process.env.DEBUG_WORKER_LOG) console.log(level, message, ...details);
		this.#waiters = this.#waiters.filter((w) => (w.test(line) ? (w.resolve(line), false) : true));
	}

	info(message: string, ...details: unknown[]) {
		this.#push('info', message, details);
	}
	warn(message: string, ...details: unknown[]) {
		this.#push('warn', message, details);
	}
	error(message: string, ...details: unknown[]) {
		this.#push('error', message, details);
	}

	waitFor(test: (l: LogLine) => boolean): Promise<LogLine> {
		const seen = this.lines.find(test);
		if (seen) return Promise.resolve(seen);
		return new Promise((resolve) => this.#waiters.push({ test, resolve }));
	}

	about(id: string): LogLine[] {
		return this.lines.filter((l) => l.message.includes(id));
	}
}
