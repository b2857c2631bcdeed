import { defineConfig } from 'vitest/config';

// Test files are isolated (a database each, cloned from a template), so they run
// in parallel; the machine has 2 cores and PostgreSQL needs one of its own.
const ci = process.env.CI === 'true' || process.env.CI === '1';

export default defineConfig({
	test: {
		include: ['test/**/*.test.ts'],
		globalSetup: ['test/setup/global.ts'],
		pool: 'forks',
		maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
		testTimeout: 60_000,
		hookTimeout: 120_000,
		teardownTimeout: 30_000,
		allowOnly: !ci,
		reporters: ['default', './test/setup/closing-line-reporter.ts'],
	},
});
