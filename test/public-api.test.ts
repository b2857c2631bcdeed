/**
 * The public surface: everything a user imports comes through src/lib/index.ts
 * (and the deliberate subpaths), and the main entry never drags in Svelte or Kit,
 * so Deno and Node workers can import it.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as api from '../src/lib/index.ts';

describe('public API', () => {
	it("exports the seed's whole vocabulary", () => {
		for (const name of [
			'JobStore',
			'JobStatus',
			'TERMINAL_JOB_STATUSES',
			'runCancellable',
			'PhasePlan',
			'ProgressTracker',
			'StageMap',
			'StageStatus',
			'StageStore',
			'JobNotFoundError',
			'JobAlreadyFinishedError',
			'JobCancelledError',
			'StageInterruptedError',
			'TimeoutError',
			'postgresAdapter',
			'supabaseAdapter',
			'defineJobKind',
			'createWorker',
			'JobUserError',
		]) {
			expect(api, name).toHaveProperty(name);
		}
		expect(new api.JobCancelledError('x')).toBeInstanceOf(api.JobAlreadyFinishedError);
	});

	it('the main entry imports neither svelte nor @sveltejs/kit (transitively)', async () => {
		const seen = new Set<string>();
		const visit = async (file: string) => {
			if (seen.has(file)) return;
			seen.add(file);
			// JSDoc examples import things too; only real imports count.
			const text = (await readFile(file, 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '');
			for (const m of text.matchAll(/from '([^']+)'/g)) {
				const spec = m[1]!;
				expect(spec.startsWith('svelte') || spec.startsWith('@sveltejs/'), `${file} imports ${spec}`).toBe(false);
				if (spec.startsWith('.')) await visit(new URL(spec, `file://${file}`).pathname);
			}
		};
		await visit(new URL('../src/lib/index.ts', import.meta.url).pathname);
		expect(seen.size).toBeGreaterThan(10);
	});
});

describe('the main entry is importable by Deno', () => {
	it('imports nothing from node: (the Node runner lives at supabase-jobs/node)', async () => {
		const seen = new Set<string>();
		const visit = async (file: string) => {
			if (seen.has(file)) return;
			seen.add(file);
			// JSDoc examples import things too; only real imports count.
			const text = (await readFile(file, 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '');
			for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
				const spec = m[1]!;
				expect(spec.startsWith('node:'), `${file} imports ${spec}`).toBe(false);
				if (spec.startsWith('.')) await visit(new URL(spec, `file://${file}`).pathname);
			}
		};
		await visit(new URL('../src/lib/index.ts', import.meta.url).pathname);
	});
});

describe('documentation where users land', () => {
	it('every export of every entry point has JSDoc with an @example', async () => {
		const ts = (await import('typescript')).default;
		const entries = ['src/lib/index.ts', 'src/lib/node.ts', 'src/lib/svelte/index.ts', 'src/lib/kit.ts'];
		const program = ts.createProgram(entries, {
			allowImportingTsExtensions: true,
			noEmit: true,
			module: ts.ModuleKind.NodeNext,
			moduleResolution: ts.ModuleResolutionKind.NodeNext,
		});
		const checker = program.getTypeChecker();
		const missing: string[] = [];
		let count = 0;
		for (const entry of entries) {
			const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
			for (const exported of checker.getExportsOfModule(moduleSymbol)) {
				const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
				// Components document themselves in their <!-- @component --> block, which TypeScript does not read.
				if (target.declarations?.[0]?.getSourceFile().fileName.includes('node_modules/svelte/')) continue;
				count++;
				if (!target.getJsDocTags(checker).some((t) => t.name === 'example')) missing.push(`${entry}: ${exported.name}`);
			}
		}
		expect(missing).toEqual([]);
		expect(count).toBeGreaterThan(100);
	});
});
