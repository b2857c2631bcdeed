/**
 * src/lib/database.types.ts is what Supabase's generator (postgres-meta, as
 * `supabase gen types typescript` runs it) writes for the migrations as they
 * are now: regenerated here over a freshly migrated database and compared.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, inject, it } from 'vitest';
import { DATABASE_TYPES_FILE, GEN_TYPES_COMMAND, databaseTypesFile } from '../../src/local/typegen/postgres-meta.ts';
import { withProductDatabase } from '../../src/local/typegen/product-database.ts';

describe('generated database types', () => {
	it('the committed src/lib/database.types.ts is what postgres-meta generates from the migrations now', async () => {
		const fresh = await withProductDatabase(inject('adminUrl'), (url) => databaseTypesFile(url));
		const committed = await readFile(DATABASE_TYPES_FILE, 'utf8').catch(() => '');
		expect(
			committed === fresh,
			`src/lib/database.types.ts is stale: the migrations changed since it was generated. Run \`${GEN_TYPES_COMMAND}\` and commit the file.`,
		).toBe(true);
	});

	it('covers the job tables, admin views and job functions, and no demo table; JOB_STATUSES is its enum', async () => {
		const text = await readFile(DATABASE_TYPES_FILE, 'utf8');
		const { Constants } = await import('../../src/lib/database.types.ts');
		const { JOB_STATUSES } = await import('../../src/lib/state.ts');
		// The statuses the package knows are the generated enum itself, not a copy of it.
		expect(JOB_STATUSES).toBe(Constants.public.Enums.job_status);
		for (const name of ['jobs: {', 'job: {', 'job_tables: {', 'phase_timings: {', 'job_counts: {', 'owner_usage: {'])
			expect(text).toContain(name);
		for (const fn of ['job_enqueue: {', 'job_claim_next: {', 'job_list_recent: {', 'is_admin: {'])
			expect(text).toContain(fn);
		expect(text).not.toContain('document_analyses');
	});
});
