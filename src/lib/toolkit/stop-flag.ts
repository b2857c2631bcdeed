/**
 * A stop decision that crosses into a worker_thread. An AbortSignal cannot be
 * transferred to another thread, and a thread busy computing never runs its
 * message handlers; a shared memory cell can be read between any two steps.
 */
import { StageInterruptedError } from '../errors.ts';

/**
 * One shared Int32 cell: 0 = keep going, 1 = stop. Create it on the event-loop
 * side (usually from the run's AbortSignal), send `flag.buffer` to the thread
 * (postMessage or workerData share it, they do not copy it), and read it there
 * with `StopFlag.attach(buffer)` between steps and before writing the result.
 *
 * @example
 * // main thread, inside a tracker phase
 * await tracker.run('reading', (signal) => {
 *   const flag = StopFlag.fromSignal(signal);
 *   const thread = new Worker(new URL('./infer.js', import.meta.url), { workerData: { stop: flag.buffer, text } });
 *   return new Promise((resolve, reject) => {
 *     thread.once('message', resolve);
 *     thread.once('error', reject);
 *   });
 * }, { size: text.length });
 *
 * // infer.js (the thread)
 * const stop = StopFlag.attach(workerData.stop);
 * for (const chunk of chunks) {
 *   if (stop.stopped) process.exit(0); // checked between steps
 *   decode(chunk);
 * }
 * if (!stop.stopped) parentPort.postMessage(result); // and before writing the result
 */
export class StopFlag {
	/** The shared memory to hand to the thread. */
	readonly buffer: SharedArrayBuffer;
	readonly #cell: Int32Array;

	private constructor(buffer: SharedArrayBuffer) {
		this.buffer = buffer;
		this.#cell = new Int32Array(buffer, 0, 1);
	}

	/**
	 * A fresh flag, not stopped.
	 *
	 * @example
	 * const flag = StopFlag.create();
	 * await tracker.run('reading', () => runInThread(flag.buffer), { stop: flag });
	 */
	static create(): StopFlag {
		return new StopFlag(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
	}

	/**
	 * The thread's view of a flag created elsewhere.
	 *
	 * @example
	 * const stop = StopFlag.attach(workerData.stop);
	 */
	static attach(buffer: SharedArrayBuffer): StopFlag {
		if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength < Int32Array.BYTES_PER_ELEMENT) {
			throw new TypeError('StopFlag.attach needs the SharedArrayBuffer of a StopFlag');
		}
		return new StopFlag(buffer);
	}

	/**
	 * A flag that is set when `signal` aborts (and already set if it has).
	 *
	 * @example
	 * const flag = StopFlag.fromSignal(signal); // signal: the one tracker.run gives the work
	 */
	static fromSignal(signal: AbortSignal): StopFlag {
		const flag = StopFlag.create();
		if (signal.aborted) flag.stop();
		else signal.addEventListener('abort', () => flag.stop(), { once: true });
		return flag;
	}

	/**
	 * True once anyone, on any thread, called `stop()`.
	 *
	 * @example
	 * if (flag.stopped) return;
	 */
	get stopped(): boolean {
		return Atomics.load(this.#cell, 0) === 1;
	}

	/**
	 * Sets the flag and wakes a thread parked in `waitUntilStopped`.
	 *
	 * @example
	 * process.once('SIGTERM', () => flag.stop());
	 */
	stop(): void {
		Atomics.store(this.#cell, 0, 1);
		Atomics.notify(this.#cell, 0);
	}

	/**
	 * Throws StageInterruptedError when stopped: the one-line checkpoint.
	 *
	 * @example
	 * for (const page of pages) {
	 *   stop.throwIfStopped('ocr');
	 *   ocr(page);
	 * }
	 */
	throwIfStopped(stage?: string): void {
		if (this.stopped) throw new StageInterruptedError(stage ? `stage "${stage}" stopped` : 'stopped', { stage });
	}

	/**
	 * Blocks the calling thread until stopped or `timeoutMs` elapses; returns
	 * whether it is stopped. Only for worker threads: the main thread may not block.
	 *
	 * @example
	 * if (stop.waitUntilStopped(50)) return; // poll a device with a timeout, wake on stop
	 */
	waitUntilStopped(timeoutMs = Infinity): boolean {
		Atomics.wait(this.#cell, 0, 0, timeoutMs);
		return this.stopped;
	}
}
