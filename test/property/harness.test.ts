/**
 * The harness every property file runs through: one seed per run, printed
 * before the first case (FC_SEED replays it), and a failure thrown with the
 * shrunk counterexample and the seed and path that run that one case again;
 * and every surface of input has its property file over both adapters and SQL.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
	vi.unstubAllEnvs();
	vi.restoreAllMocks();
	vi.resetModules();
});

describe('the property harness', () => {
	it('prints the seed once, before the first case, and FC_SEED fixes it', async () => {
		vi.stubEnv('FC_SEED', '424242');
		const log = vi.spyOn(console, 'log').mockImplementation(() => {});
		const { checkProperty, fc, propertySeed } = await import('../helpers/property.ts');
		expect(propertySeed).toBe(424242);
		await checkProperty(fc.integer(), async () => {}, { numRuns: 3 });
		await checkProperty(fc.integer(), async () => {}, { numRuns: 3 });
		expect(log.mock.calls).toEqual([['fast-check seed 424242 (replay with FC_SEED=424242)']]);
	});

	it('a failure throws the shrunk case with the seed and path that replay it', async () => {
		vi.spyOn(console, 'log').mockImplementation(() => {});
		const { checkProperty, fc, propertySeed } = await import('../helpers/property.ts');
		const failure = await checkProperty(
			fc.integer({ min: 0, max: 1_000_000 }),
			async (n) => {
				if (n >= 10) throw new Error(`${n} is 10 or more`);
			},
			{ numRuns: 200 },
		).then(
			() => null,
			(e: unknown) => e as Error,
		);
		expect(failure).toBeInstanceOf(Error);
		// Shrunk to the smallest failing value.
		expect(failure!.message).toContain('Counterexample: [10]');
		expect(failure!.message).toMatch(new RegExp(`replay with FC_SEED=${propertySeed} FC_PATH=\\d+(:\\d+)*`));
		expect((failure!.cause as Error).message).toBe('10 is 10 or more');

		// The path it names runs that one case again.
		const path = /FC_PATH=(\S+)/.exec(failure!.message)![1]!;
		vi.resetModules();
		vi.stubEnv('FC_SEED', String(propertySeed));
		vi.stubEnv('FC_PATH', path);
		const replay = await import('../helpers/property.ts');
		const seen: number[] = [];
		const again = await replay
			.checkProperty(replay.fc.integer({ min: 0, max: 1_000_000 }), async (n) => {
				seen.push(n);
				if (n >= 10) throw new Error(`${n} is 10 or more`);
			})
			.catch((e: unknown) => e);
		expect(again).toBeInstanceOf(Error);
		expect(seen[0]).toBe(10);
	});
});

/** Each surface of input and the SQL function its file calls directly. */
const SURFACES = {
	'enqueue-options': 'public.job_enqueue',
	'batch-items': 'public.job_enqueue_many',
	schedules: 'public.job_sync_schedules',
	limits: 'public.job_set_concurrency',
	answers: 'public.job_answer',
	'stream-chunks': 'public.job_stream_append',
	'log-lines': 'public.job_log',
	metadata: 'public.job_tick',
};

describe('the property files', () => {
	it.each(Object.entries(SURFACES))(
		'%s runs its property over both adapters (openSurfaces) and over %s called directly',
		async (file, fn) => {
			const text = await readFile(`test/property/${file}.test.ts`, 'utf8');
			expect(text).toContain('await openSurfaces()');
			expect(text).toMatch(/^describe\.each\(stores\)\(/m);
			expect(text).toContain(`describe('${fn}`);
			expect(text.match(/await checkProperty\(/g)?.length).toBeGreaterThanOrEqual(2);
		},
	);

	it('openSurfaces gives a store over postgres.js and one over supabase-js', async () => {
		const text = await readFile('test/property/surfaces.ts', 'utf8');
		expect(text).toMatch(/name: 'postgres\.js', store: new JobStore\(postgresAdapter\(/);
		expect(text).toMatch(/name: 'supabase-js', store: new JobStore\(f\.harness\.adapter\(/);
	});
});
