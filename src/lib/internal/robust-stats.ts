/**
 * Median and Theil–Sen: estimators a few outliers cannot drag (one job that
 * hit a cold model or a retry storm must not repace every bar after it).
 */

/**
 * The middle value (the mean of the two middle ones for an even count).
 *
 * @example
 * median([3, 1, 2, 10]); // 2.5
 */
export function median(values: readonly number[]): number {
	if (values.length === 0) throw new RangeError('median of no values');
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * One observation: x = size in kilochars, y = seconds.
 */
export interface Point {
	x: number;
	y: number;
}

/**
 * Theil–Sen slope: the median of the slopes of every pair with distinct x.
 * Null when no such pair exists. O(n²) pairs: callers cap n.
 *
 * @example
 * theilSenSlope([{ x: 1, y: 2 }, { x: 2, y: 4 }, { x: 3, y: 60 }]); // 2, the outlier ignored
 */
export function theilSenSlope(points: readonly Point[]): number | null {
	const slopes: number[] = [];
	for (let i = 0; i < points.length; i++) {
		for (let j = i + 1; j < points.length; j++) {
			const a = points[i]!;
			const b = points[j]!;
			if (a.x !== b.x) slopes.push((b.y - a.y) / (b.x - a.x));
		}
	}
	return slopes.length ? median(slopes) : null;
}
