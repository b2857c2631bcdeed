import type { MaybeGetter } from '../types.ts';

/** @internal Reads a MaybeGetter (values that are themselves functions are not supported). */
export function read<T>(value: MaybeGetter<T>): T {
	return typeof value === 'function' ? (value as () => T)() : value;
}
