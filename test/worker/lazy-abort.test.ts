import { describe, expect, test } from 'vitest';
import { LazyAbort } from '../../src/lib/internal/lazy-abort.ts';

describe('LazyAbort', () => {
	test('a signal taken after the abort is already aborted, with the same reason', () => {
		const stop = new LazyAbort();
		const reason = new Error('shutdown');
		stop.abort(reason);
		expect(stop.signal.aborted).toBe(true);
		expect(stop.signal.reason).toBe(reason);
	});

	test('a signal taken before the abort fires once, with the first reason only', () => {
		const stop = new LazyAbort();
		const seen: unknown[] = [];
		stop.signal.addEventListener('abort', () => seen.push(stop.signal.reason));
		stop.abort('first');
		stop.abort('second');
		expect(seen).toEqual(['first']);
		expect(stop.reason).toBe('first');
	});

	test('listeners run once on abort, at once when added after it, and not at all once removed', () => {
		const stop = new LazyAbort();
		const seen: string[] = [];
		stop.onAbort((r) => seen.push(`a:${String(r)}`));
		const off = stop.onAbort((r) => seen.push(`b:${String(r)}`));
		off();
		expect(stop.aborted).toBe(false);
		stop.abort('x');
		stop.abort('y');
		stop.onAbort((r) => seen.push(`late:${String(r)}`));
		expect(seen).toEqual(['a:x', 'late:x']);
	});
});
