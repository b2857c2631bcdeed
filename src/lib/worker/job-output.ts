/**
 * A handler's streamed output (`ctx.stream(name)`): writes are buffered and
 * sent at most once per flush interval, all streams together, so a model
 * writing 50 tokens a second costs a few appends (and Realtime messages) a
 * second, not 50. The first write after a quiet spell goes at once. Appends
 * of one job go one at a time, in order; one refused (the job was cancelled,
 * another attempt owns it) makes every later write throw that refusal.
 */
import { STREAM_MAX_BYTES, STREAM_NAME_PATTERN } from '../internal/limits.ts';
import { invalid } from '../store/input-checks.ts';

/**
 * One named stream of the job being run: what `ctx.stream('summary')` returns.
 */
export interface JobStreamWriter {
	/** The stream's name. */
	readonly name: string;
	/**
	 * Appends text (buffered: sent within the flush interval). Throws
	 * {@link InvalidJobInputError} naming `streams.<name>` past the job's
	 * bound (4 MiB), and the refusal of an earlier append once one was
	 * refused (the job was cancelled).
	 */
	write(text: string): void;
	/**
	 * Writes every piece of an iterable (a model's token stream; strings or
	 * UTF-8 bytes) as it comes, then flushes. Stops when the handler's signal aborts.
	 */
	pipe(source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): Promise<void>;
	/** Resolves once everything written so far was stored and sent to the watchers. */
	flush(): Promise<void>;
}

/** Options of {@link JobOutput}. */
export interface JobOutputOptions {
	/** The least time between two flushes. */
	flushMs: number;
	/** The handler's signal: a pipe stops when it aborts. */
	signal(): AbortSignal;
}

/**
 * The least time between two appends of one job's output: at most four
 * Realtime messages a second per stream written.
 *
 * @internal
 */
export const STREAM_FLUSH_MS = 250;

/** The most UTF-16 units per append: at most 3 bytes each in UTF-8 (a pair: 4 for 2), under stream_chunk_max_bytes. */
const PIECE_UNITS = 16384;

const encoder = new TextEncoder();

/** `text` in pieces of at most PIECE_UNITS units, never splitting a surrogate pair. */
function pieces(text: string): string[] {
	const out: string[] = [];
	let from = 0;
	while (from < text.length) {
		let to = Math.min(text.length, from + PIECE_UNITS);
		const last = text.charCodeAt(to - 1);
		if (to < text.length && last >= 0xd800 && last <= 0xdbff) to -= 1;
		out.push(text.slice(from, to));
		from = to;
	}
	return out;
}

/**
 * The streams of one run, coalesced into appends.
 *
 * @internal
 * @example
 * ```ts
 * const output = new JobOutput((stream, text) => store.appendStream(job.id, stream, text, { attempt }), options);
 * output.stream('summary').write('Hello');
 * await output.flush();
 * ```
 */
export class JobOutput {
	readonly #append: (stream: string, text: string) => Promise<unknown>;
	readonly #options: JobOutputOptions;
	/** Text written and not sent yet, by stream, in the order streams were first written. */
	#pending = new Map<string, string>();
	#bytes = 0;
	#timer: ReturnType<typeof setTimeout> | undefined;
	#sending: Promise<void> | null = null;
	#lastSentAt = -Infinity;
	#failure: { error: unknown } | null = null;
	readonly #writers = new Map<string, JobStreamWriter>();

	constructor(append: (stream: string, text: string) => Promise<unknown>, options: JobOutputOptions) {
		this.#append = append;
		this.#options = options;
	}

	/** The writer of one stream (the same object for the same name). */
	stream(name: string): JobStreamWriter {
		const existing = this.#writers.get(name);
		if (existing) return existing;
		if (typeof name !== 'string' || !STREAM_NAME_PATTERN.test(name))
			throw invalid(
				'stream',
				`a stream name is a letter then up to 63 letters, digits, _ or -; got ${JSON.stringify(name)}`,
			);
		const writer: JobStreamWriter = {
			name,
			write: (text) => this.#write(name, text),
			pipe: (source) => this.#pipe(name, source),
			flush: () => this.flush(),
		};
		this.#writers.set(name, writer);
		return writer;
	}

	#write(name: string, text: string): void {
		if (this.#failure) throw this.#failure.error;
		if (typeof text !== 'string')
			throw invalid(`streams.${name}`, `a stream takes text; got ${text === null ? 'null' : typeof text}`);
		if (text === '') return;
		const bytes = encoder.encode(text).byteLength;
		if (this.#bytes + bytes > STREAM_MAX_BYTES)
			throw invalid(
				`streams.${name}`,
				`the streams of a job hold at most ${STREAM_MAX_BYTES} bytes; writing ${bytes} more bytes to ${name} would make ${this.#bytes + bytes}`,
			);
		this.#bytes += bytes;
		this.#pending.set(name, (this.#pending.get(name) ?? '') + text);
		this.#schedule();
	}

	async #pipe(name: string, source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): Promise<void> {
		const decoder = new TextDecoder();
		const signal = this.#options.signal();
		for await (const piece of source) {
			if (signal.aborted) throw signal.reason;
			this.#write(name, typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true }));
		}
		const tail = decoder.decode();
		if (tail !== '') this.#write(name, tail);
		await this.flush();
	}

	#schedule(): void {
		if (this.#timer !== undefined || this.#sending) return;
		const wait = Math.max(0, this.#lastSentAt + this.#options.flushMs - performance.now());
		this.#timer = setTimeout(() => {
			this.#timer = undefined;
			void this.#send().catch(() => {});
		}, wait);
	}

	/** Sends what is pending now, stream by stream, one append at a time; what comes meanwhile waits for the next interval. */
	#send(): Promise<void> {
		if (this.#sending) return this.#sending;
		const sending = this.#sendPending();
		this.#sending = sending;
		const settled = () => {
			if (this.#sending === sending) this.#sending = null;
			this.#lastSentAt = performance.now();
			if (this.#pending.size > 0 && !this.#failure) this.#schedule();
		};
		sending.then(settled, settled);
		return sending;
	}

	async #sendPending(): Promise<void> {
		await Promise.resolve(); // #sending is set before the first append starts
		const batch = this.#pending;
		this.#pending = new Map();
		this.#lastSentAt = performance.now();
		try {
			for (const [name, text] of batch) for (const piece of pieces(text)) await this.#append(name, piece);
		} catch (error) {
			this.#failure ??= { error };
			throw error;
		}
	}

	/** Resolves once everything written so far was sent; rejects with the refusal of an append. */
	async flush(): Promise<void> {
		for (;;) {
			if (this.#timer !== undefined) clearTimeout(this.#timer);
			this.#timer = undefined;
			if (this.#failure) throw this.#failure.error;
			if (this.#sending) {
				await this.#sending.catch(() => {});
				continue;
			}
			if (this.#pending.size === 0) return;
			await this.#send().catch(() => {});
		}
	}

	/** Stops sending: what is still pending is dropped (the run was stopped). */
	discard(): void {
		if (this.#timer !== undefined) clearTimeout(this.#timer);
		this.#timer = undefined;
		this.#pending.clear();
	}
}
