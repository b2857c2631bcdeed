/**
 * Counts the inputs each boundary tried, and collects every input whose
 * answer broke the rules, so one run names all of them at once.
 */

export class Tally {
	readonly tried = new Map<string, number>();
	readonly problems: string[] = [];
	/** Milliseconds each boundary's barrage took. */
	readonly elapsedMs = new Map<string, number>();

	count(boundary: string, n = 1): void {
		this.tried.set(boundary, (this.tried.get(boundary) ?? 0) + n);
	}

	problem(boundary: string, input: string, what: string): void {
		this.problems.push(`[${boundary}] ${input}: ${what}`);
	}

	of(boundary: string): number {
		return this.tried.get(boundary) ?? 0;
	}

	get total(): number {
		return [...this.tried.values()].reduce((a, b) => a + b, 0);
	}

	lines(): string[] {
		const took = [...this.elapsedMs].map(([b, ms]) => `  ${b} barrage: ${(ms / 1000).toFixed(1)} s`);
		return [...[...this.tried].map(([b, n]) => `  ${b}: ${n} inputs`), `  total: ${this.total} inputs`, ...took];
	}
}

/** A short, printable name for an input (long and control characters elided). */
export function describeInput(value: unknown): string {
	const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
	const shown = text.length > 60 ? `${text.slice(0, 40)}…(${text.length} chars)` : text;
	// JSON.stringify writes control characters as \uXXXX escapes: printable in any log.
	return JSON.stringify(shown);
}
