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

	test('a linked abort follows with the same reason, at once when linked late, and not at all once unlinked', () => {
		const outer = new LazyAbort();
		const inner = new LazyAbort();
		const loose = new LazyAbort();
		outer.link(inner);
		outer.link(loose);
		outer.unlink(loose);
		outer.abort('stop');
		expect([inner.aborted, inner.reason, loose.aborted]).toEqual([true, 'stop', false]);
		const late = new LazyAbort();
		outer.link(late);
		expect(late.reason).toBe('stop');
	});

	test('whenAborted resolves with the reason, whether asked before or after the abort', async () => {
		const early = new LazyAbort();
		const waiting = early.whenAborted();
		early.abort('first');
		early.abort('second');
		await expect(waiting).resolves.toBe('first');
		await expect(early.whenAborted()).resolves.toBe('first');
		const late = new LazyAbort();
		late.abort('done');
		await expect(late.whenAborted()).resolves.toBe('done');
	});
});
