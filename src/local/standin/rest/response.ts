/**
 * Response pieces shared by the REST handlers, after PostgREST's
 * src/library/PostgREST/RangeQuery.hs (`rangeStatusHeader`, `contentRangeH`).
 */

export interface RestResponse {
	status: number;
	headers: Record<string, string>;
	/** null: no body (204, HEAD). */
	body: string | null;
}

/** `Content-Range: lower-upper/total` with `*` where unknown or empty. */
export function contentRange(lower: number, upper: number, total: number | null): string {
	const range = total !== 0 && lower <= upper ? `${lower}-${upper}` : '*';
	return `${range}/${total === null ? '*' : total}`;
}

/** 200, 206 (a page of a counted total) or 416 (offset past the total). */
export function rangeStatus(lower: number, upper: number, total: number | null): number {
	if (total === null) return 200;
	if (lower > total) return 416;
	if (1 + upper - lower < total) return 206;
	return 200;
}
