/**
 * What a screen reader is told of a growing text: never each token, only
 * whole sentences or lines once they are complete, and the rest when the
 * text ends. `<JobStream>` puts it in its polite live region.
 *
 * @internal
 */

/** A sentence ends with . ! ? … or 。 before whitespace; a line with a newline. */
const BOUNDARY = /[.!?…。](?=\s)|\n/g;

/**
 * The part of `text` after `from` up to its last complete sentence or line
 * (all of it once `ended`), and where the next announcement starts; null when
 * nothing new is complete. A text shorter than `from` started over (a retry)
 * and is read from its start.
 *
 * @internal
 * @example
 * ```ts
 * nextAnnouncement('One. Two is bei', 0, false); // { say: 'One.', upTo: 4 }
 * ```
 */
export function nextAnnouncement(text: string, from: number, ended: boolean): { say: string; upTo: number } | null {
	const start = from > text.length ? 0 : from;
	const rest = text.slice(start);
	if (ended) {
		const say = rest.trim();
		return say === '' ? null : { say, upTo: text.length };
	}
	let last = -1;
	for (const match of rest.matchAll(BOUNDARY)) last = match.index;
	if (last < 0) return null;
	const say = rest.slice(0, last + 1).trim();
	return say === '' ? null : { say, upTo: start + last + 1 };
}
