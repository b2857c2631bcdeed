// The npm packages the worker function imports besides supabase-jobs (the
// postgres.js driver and zod), and the version its deno.json pins for each.
// With nodeModulesDir "manual" Deno runs only what the project's node_modules
// holds, and `npm i postgres zod` installs the registry's latest, whatever the
// package's own range says: so the pin is the version installed there (as a
// caret range, so a later compatible update still matches), and the package's
// range only says whether that version is one the package supports.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The packages the function's deno.json maps besides supabase-jobs itself. */
export const FUNCTION_NPM_IMPORTS = /** @type {const} */ (['postgres', 'zod']);

/**
 * The version of `name` Deno would load from `fromDir`: the nearest
 * node_modules/<name> up the folders (as Deno and Node look); null when none.
 * @param {string} name
 * @param {string} fromDir
 * @returns {string | null}
 */
export function installedVersion(name, fromDir) {
	for (let dir = resolve(fromDir); ; dir = dirname(dir)) {
		const file = join(dir, 'node_modules', name, 'package.json');
		if (existsSync(file)) {
			const version = JSON.parse(readFileSync(file, 'utf8')).version;
			return typeof version === 'string' ? version : null;
		}
		if (dirname(dir) === dir) return null;
	}
}

/** @param {string} version @returns {[number, number, number]} */
function parts(version) {
	const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
	if (!m) throw new Error(`not a version: ${version}`);
	return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/**
 * The alternatives of a dependency range made of caret ranges (`^3.4.9 || ^4.2.0`,
 * the only form the package's dependencies use), each as its lowest version.
 * @param {string} range
 */
function caretAlternatives(range) {
	return range.split('||').map((alt) => {
		const m = /^\s*\^(\d+\.\d+\.\d+)\s*$/.exec(alt);
		if (!m) throw new Error(`supabase-jobs: the range ${range} is not caret ranges joined by ||`);
		return /** @type {string} */ (m[1]);
	});
}

/**
 * Whether `version` is within `range` (caret ranges joined by `||`): the same
 * major (minor too below 1.0.0) and not older than the alternative's version.
 * @param {string} range
 * @param {string} version
 */
export function satisfies(range, version) {
	const [major, minor, patch] = parts(version);
	return caretAlternatives(range).some((alt) => {
		const [a, b, c] = parts(alt);
		if (major !== a || (a === 0 && minor !== b)) return false;
		return minor > b || (minor === b && patch >= c);
	});
}

/**
 * The newest alternative of a range (`^4.2.0` of `^3.4.9 || ^4.2.0`): what a
 * deno.json pins when nothing is installed yet (Deno takes no `||` in a specifier).
 * @param {string} range
 */
export function newestAlternative(range) {
	const alts = caretAlternatives(range);
	const key = (/** @type {string} */ v) => parts(v).reduce((k, p) => k * 1e6 + p, 0);
	return `^${alts.reduce((a, b) => (key(b) > key(a) ? b : a))}`;
}

/**
 * @typedef {{ problem: string; fix: string }} PinIssue what is wrong with a
 *   package the function imports, and the command or value that puts it right
 */

/**
 * What the function's deno.json maps `name` to, and the issue when the
 * installed version is missing or one the package does not support.
 * @param {string} name
 * @param {string} range the package's own dependency range for it
 * @param {string | null} installed the version in the project's node_modules
 * @returns {{ specifier: string; issue: PinIssue | null }}
 */
export function npmPin(name, range, installed) {
	const newest = newestAlternative(range);
	if (installed === null)
		return {
			specifier: `npm:${name}@${newest}`,
			issue: {
				problem: `${name} is not installed in this project, and the worker imports it from node_modules`,
				fix: `npm i ${name}`,
			},
		};
	return {
		specifier: `npm:${name}@^${installed}`,
		issue: satisfies(range, installed)
			? null
			: {
					problem: `${name} ${installed} is installed, and supabase-jobs supports ${range}`,
					fix: `npm i ${name}@${parts(newest.slice(1))[0]}`,
				},
	};
}

/** @param {PinIssue} issue */
export const issueLine = (issue) => `${issue.problem}: ${issue.fix}`;

/**
 * The pins for every package of {@link FUNCTION_NPM_IMPORTS}, read from the
 * project's node_modules as Deno would find it from the function's folder.
 * @param {Record<string, string>} dependencies the package's package.json dependencies
 * @param {string} functionDir
 */
export function functionNpmPins(dependencies, functionDir) {
	return FUNCTION_NPM_IMPORTS.map((name) => {
		const range = dependencies[name];
		if (range === undefined) throw new Error(`supabase-jobs: package.json has no dependency on ${name}`);
		const installed = installedVersion(name, functionDir);
		return { name, range, installed, ...npmPin(name, range, installed) };
	});
}

/**
 * Sentences for the imports of an existing deno.json that no longer match what
 * node_modules holds (the function would not start: Deno finds no matching
 * package), each with the value to set. An entry that is not `npm:<name>@^x.y.z`
 * or `npm:<name>@x.y.z` is the user's own choice and left alone.
 * @param {string} denoJsonText
 * @param {{ name: string; installed: string | null; specifier: string }[]} pins
 * @returns {PinIssue[]}
 */
export function pinDrift(denoJsonText, pins) {
	/** @type {Record<string, unknown>} */
	let imports;
	try {
		imports = JSON.parse(denoJsonText).imports ?? {};
	} catch {
		return [];
	}
	/** @type {PinIssue[]} */
	const out = [];
	for (const { name, installed, specifier } of pins) {
		const value = imports[name];
		if (installed === null || typeof value !== 'string') continue;
		const m = new RegExp(`^npm:${name}@(\\^?)(\\d+\\.\\d+\\.\\d+)$`).exec(value);
		if (!m) continue;
		const matches = m[1] ? satisfies(`^${m[2]}`, installed) : m[2] === installed;
		if (!matches)
			out.push({
				problem: `deno.json maps ${name} to ${value}, and node_modules has ${installed}`,
				fix: `set it to "${specifier}"`,
			});
	}
	return out;
}

/**
 * The issues of the function's packages in a project: each installed version
 * the package does not support or missing, and each pin of the function's
 * deno.json (when it has one) that node_modules does not match.
 * @param {Record<string, string>} dependencies the package's package.json dependencies
 * @param {string} functionDir
 * @returns {{ pins: ReturnType<typeof functionNpmPins>; issues: PinIssue[] }}
 */
export function functionNpmIssues(dependencies, functionDir) {
	const pins = functionNpmPins(dependencies, functionDir);
	const issues = pins.flatMap((p) => (p.issue ? [p.issue] : []));
	const denoJsonPath = join(functionDir, 'deno.json');
	if (existsSync(denoJsonPath)) issues.push(...pinDrift(readFileSync(denoJsonPath, 'utf8'), pins));
	return { pins, issues };
}
