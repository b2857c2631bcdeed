/**
 * The tarball `npm publish` would upload, judged as npm and its linters judge
 * it: what it holds (the compiled entries, the files package.json points at,
 * README, LICENSE and CHANGELOG; nothing of the demo, the routes, the local
 * stack, the tests or the bench), `npm publish --dry-run` with no warning,
 * publint and are-the-types-wrong with no problem, and `npm i` of it alone
 * in an empty project on each Node the tests have: no EBADENGINE nor any other
 * warning on a Node that `engines` admits, and EBADENGINE naming the package
 * on one it refuses (this machine's Node 20).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineFloor } from '../../scripts/nodes.mjs';
import { SERVER_NODES, nodeVersion } from '../helpers/nodes.ts';
import { packInto } from './pack.ts';

const exec = promisify(execFile);
const repo = resolve('.');
/** An install from the registry, npm's own checks: each can take a minute on a busy 2-core machine. */
const SLOW = 180_000;

let work: string;
let tarball: string;
let files: string[];
let pkg: { name: string; version: string; engines: { node: string }; exports: unknown; bin: Record<string, string> };

/** Runs a command to completion; its output (stdout and stderr), or a failure that shows it. */
async function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
	try {
		return await exec(command, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
	} catch (e) {
		const { stdout, stderr } = e as { stdout?: string; stderr?: string };
		throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: e });
	}
}

/** Every path an `exports` map names, at any depth of its conditions. */
function exportTargets(value: unknown): string[] {
	if (typeof value === 'string') return [value];
	if (value && typeof value === 'object') return Object.values(value).flatMap(exportTargets);
	return [];
}

/** `[major, minor, patch]` of `v22.12.0` or `22.12.0`. */
const parts = (version: string) => version.replace(/^v/, '').split('.').map(Number) as [number, number, number];

/** Whether `version` is at or above `floor` (engines.node is a lone `>=` bound: scripts/nodes.mjs). */
function admits(floor: string, version: string): boolean {
	const [a, b] = [parts(version), parts(floor)];
	for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! > b[i]!;
	return true;
}

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), 'sj-tarball-'));
	tarball = await packInto(work, repo);
	pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
	const { stdout } = await sh('tar', ['-tzf', tarball], work);
	files = stdout
		.split('\n')
		.filter(Boolean)
		.map((f) => f.replace(/^package\//, ''))
		.sort();
}, 300_000);

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

describe('the tarball npm publishes', () => {
	it('holds compiled JavaScript with declarations for every entry, the components, migrations, function and bin', async () => {
		for (const entry of ['index', 'worker', 'node', 'kit', 'adapter', 'svelte/index']) {
			expect(files).toContain(`dist/${entry}.js`);
			expect(files).toContain(`dist/${entry}.d.ts`);
		}
		expect(files).toContain('dist/svelte/components/JobProgress.svelte');
		expect(files).toContain('dist/svelte/components/JobProgress.svelte.d.ts');
		expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('functions/'))).toEqual([]);
		// Every migration of the repository but the demo's.
		const { packageMigrations } = await import('../../bin/init.mjs');
		const migrations = (await packageMigrations(repo)).map((m) => `supabase/migrations/${m.file}`);
		expect(files.filter((f) => f.startsWith('supabase/migrations/')).sort()).toEqual(migrations.sort());
		expect(files.some((f) => f.includes('_demo_'))).toBe(false);
		for (const f of ['functions/jobs-worker/index.ts', 'functions/jobs-worker/serve.ts']) expect(files).toContain(f);
	});

	it('holds every file package.json exports, types and bin point at, and README, LICENSE, CHANGELOG', () => {
		const named = [...exportTargets(pkg.exports), (pkg as { types?: string }).types ?? '', ...Object.values(pkg.bin)];
		const targets = [...new Set(named.filter(Boolean).map((p) => p.replace(/^\.\//, '')))];
		expect(targets.length).toBeGreaterThan(12);
		expect(targets.filter((t) => !files.includes(t))).toEqual([]);
		expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json']));
	});

	it('holds nothing of the demo, the routes, the local stack and stand-in, the tests, the bench, the docs or the sources', () => {
		const outside = files.filter(
			(f) =>
				!/^(dist|bin|supabase\/migrations|functions\/jobs-worker)\//.test(f) &&
				!['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json'].includes(f),
		);
		expect(outside).toEqual([]);
		// dist/ is src/lib compiled: the demo's, the local stack's and the stand-in's modules never reach it.
		expect(files.filter((f) => /(^|\/)(demo|routes|local|standin|test|tests|bench)(\/|\.|$)/.test(f))).toEqual([]);
		expect(files.filter((f) => f.endsWith('.map') || f.includes('.test.'))).toEqual([]);
	});

	it('npm publish --dry-run prints no warning and would publish the version package.json names', async () => {
		const { stdout, stderr } = await sh('npm', ['publish', '--dry-run', tarball], work);
		// Publishing needs an npm login, which a test machine does not have: the one warning
		// that is about the machine, not the package.
		const notLoggedIn = /^npm warn publish This command requires you to be logged in to .* \(dry-run\)$/;
		const warnings = `${stdout}\n${stderr}`
			.split('\n')
			.filter((l) => /^npm (warn|error)/.test(l) && !notLoggedIn.test(l));
		expect(warnings).toEqual([]);
		expect(stdout).toContain(`+ ${pkg.name}@${pkg.version}`);
		const size = /npm notice package size: *(.+)/.exec(stderr)?.[1];
		const unpacked = /npm notice unpacked size: *(.+)/.exec(stderr)?.[1];
		console.log(
			`[figures] tarball ${pkg.name}@${pkg.version}: ${files.length} files, ${size} packed, ${unpacked} unpacked`,
		);
	});

	it('publint, strict, down to suggestions: no message', async () => {
		const bytes = await readFile(tarball);
		const result = await publint({
			pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer },
			level: 'suggestion',
			strict: true,
		});
		expect(result.messages.map((m) => `${m.type} ${m.code}: ${formatMessage(m, result.pkg)}`)).toEqual([]);
		expect(result.pkg.version).toBe(pkg.version);
	});

	it('are-the-types-wrong: no problem for node16 (ESM) and bundler resolution on any entry', async () => {
		const attw = join(repo, 'node_modules/@arethetypeswrong/cli/dist/index.js');
		// The esm-only profile: an ESM package is not for require() (node16 from CJS) nor for node10.
		const run = await exec(process.execPath, [attw, tarball, '--profile', 'esm-only', '--format', 'json'], {
			cwd: work,
			maxBuffer: 64 << 20,
		}).then(
			(r) => ({ code: 0, stdout: r.stdout }),
			(e: { code: number; stdout: string }) => e,
		);
		const report = JSON.parse(run.stdout);
		expect(Object.keys(report.analysis.entrypoints).sort()).toEqual([
			'.',
			'./adapter',
			'./kit',
			'./node',
			'./package.json',
			'./svelte',
			'./worker',
		]);
		type Problem = { kind: string; entrypoint?: string; resolutionKind?: string; resolutionOption?: string };
		const problems = (Object.values(report.problems ?? {}).flat() as Problem[]).filter(
			(p) => !['node10', 'node16-cjs'].includes(p.resolutionKind ?? p.resolutionOption ?? ''),
		);
		expect(problems).toEqual([]);
		expect(run.code).toBe(0);
	});
});

describe('npm i of the tarball alone, in an empty project', () => {
	const floor = engineFloor();

	it('engines.node is the floor the tests run: a lone >= bound at the Node 22 the tests add', () => {
		expect(pkg.engines.node).toBe(`>=${floor}`);
		expect(SERVER_NODES.map((n) => nodeVersion(n.path))).toContain(`v${floor}`);
	});

	for (const node of SERVER_NODES) {
		it(
			`with npm on ${node.name}: no EBADENGINE where engines admits it, EBADENGINE naming the package where it does not`,
			async () => {
				const version = nodeVersion(node.path);
				const project = await mkdtemp(join(work, `consumer-${version}-`));
				await writeFile(join(project, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}');
				// npm itself runs on the Node first on PATH: its engine checks judge that Node.
				const PATH = `${dirname(node.path)}${delimiter}${process.env.PATH}`;
				const run = await sh('npm', ['install', '--no-audit', '--no-fund', tarball], project, { PATH });
				const log = `${run.stdout}\n${run.stderr}`;
				const refused = [...log.matchAll(/EBADENGINE +package: '([^']+)'/g)].map((m) => m[1]);
				console.log(
					`[figures] npm i of the tarball on Node ${version}: ${refused.length} EBADENGINE ${refused.join(' ')}`,
				);
				const installed = JSON.parse(
					await readFile(join(project, 'node_modules/@supabase/supabase-js/package.json'), 'utf8'),
				) as { version: string; engines?: { node?: string } };
				if (admits(floor, version)) {
					expect(refused).toEqual([]);
					expect(log.split('\n').filter((l) => /^npm (warn|error)/.test(l))).toEqual([]);
					// The supabase-js npm chose is one whose own floor is at or below ours.
					const theirs = /^>=\s*(\d+\.\d+\.\d+)$/.exec(installed.engines?.node ?? '>=0.0.0')?.[1] ?? '';
					expect(admits(theirs, floor), `${installed.version} needs ${installed.engines?.node}`).toBe(true);
				} else {
					expect(refused).toContain(`${pkg.name}@${pkg.version}`);
				}
			},
			SLOW,
		);
	}
});
