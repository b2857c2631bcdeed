/**
 * The text of a job's streams, as a WatchedJob shows it: pieces appended in
 * order per stream; a piece of a later attempt starts the output over (the
 * retry writes it again); nothing of an earlier attempt is taken after that.
 *
 * @internal
 */
import type { JobStreamPiece, JobWatchSource } from '../types.ts';

/** @internal */
export class StreamTexts {
	#texts = $state.raw<Readonly<Record<string, string>>>({});
	#ended = $state(false);
	#attempt = 0;

	/** Each stream's text so far, by name. */
	get texts(): Readonly<Record<string, string>> {
		return this.#texts;
	}

	/** True once the job ended and all it wrote was read. */
	get ended(): boolean {
		return this.#ended;
	}

	apply(pieces: readonly JobStreamPiece[]): void {
		let next: Record<string, string> | null = null;
		for (const piece of pieces) {
			if (piece.attempt < this.#attempt) continue;
			if (piece.attempt > this.#attempt) {
				this.#attempt = piece.attempt;
				next = {};
			}
			next ??= { ...this.#texts };
			next[piece.stream] = (next[piece.stream] ?? '') + piece.text;
		}
		if (next) this.#texts = next;
	}

	reset(): void {
		this.#texts = {};
		this.#ended = false;
		this.#attempt = 0;
	}

	/** Follows the source's streams of job `id` until they end or `signal` aborts; true when they ended. */
	async follow(source: JobWatchSource, id: string, signal: AbortSignal): Promise<boolean> {
		if (!source.watchStreams) return false;
		for await (const pieces of source.watchStreams(id, { signal })) {
			if (signal.aborted) return false;
			this.apply(pieces);
		}
		if (signal.aborted) return false;
		this.#ended = true;
		return true;
	}
}
