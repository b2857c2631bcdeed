/**
 * What the stand-in reads from the project's `supabase/config.toml`, as the
 * Supabase CLI does when it starts its local services, with the CLI's own
 * defaults where a key is absent (supabase/cli pkg/config/templates/config.toml):
 * - `[api] max_rows` (default 1000, also the hosted value): PostgREST's
 *   `db-max-rows`, the most rows any REST reply carries;
 * - `[auth] enable_anonymous_sign_ins` (default false): whether
 *   `signInAnonymously()` is allowed (GoTrue `GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';

export interface ProjectConfig {
	/** `[api] max_rows`; null: no cap. */
	maxRows: number | null;
	/** `[auth] enable_anonymous_sign_ins`. */
	anonymousSignIns: boolean;
}

/** The Supabase CLI's defaults (its config.toml template). */
export const CLI_DEFAULTS: ProjectConfig = { maxRows: 1000, anonymousSignIns: false };

/** `supabase/config.toml` under `cwd` (the project folder). */
export const defaultConfigPath = (cwd = process.cwd()) => join(cwd, 'supabase', 'config.toml');

/**
 * Reads `path` (a config.toml); a missing file gives the CLI defaults. A value
 * of the wrong type is refused naming its key.
 *
 * @example
 * const { maxRows, anonymousSignIns } = readProjectConfig('supabase/config.toml');
 */
export function readProjectConfig(path: string | null): ProjectConfig {
	if (path === null || !existsSync(path)) return { ...CLI_DEFAULTS };
	const toml = parse(readFileSync(path, 'utf8')) as { api?: { max_rows?: unknown }; auth?: Record<string, unknown> };
	const maxRows = toml.api?.max_rows ?? CLI_DEFAULTS.maxRows;
	if (!(typeof maxRows === 'number' && Number.isInteger(maxRows) && maxRows > 0))
		throw new TypeError(`${path}: [api] max_rows must be a positive integer; got ${JSON.stringify(maxRows)}`);
	const anon = toml.auth?.enable_anonymous_sign_ins ?? CLI_DEFAULTS.anonymousSignIns;
	if (typeof anon !== 'boolean')
		throw new TypeError(`${path}: [auth] enable_anonymous_sign_ins must be true or false; got ${JSON.stringify(anon)}`);
	return { maxRows, anonymousSignIns: anon };
}
