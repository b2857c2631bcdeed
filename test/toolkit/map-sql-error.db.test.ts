import { beforeAll, describe, expect, it } from 'vitest';
import { fromPostgresError } from '../../src/lib/internal/map-sql-error.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';

// The mapping table above is checked against hand-built errors; this checks
// that what a real server raises through postgres.js has the shape it reads.
let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

describe('fromPostgresError on errors a real PostgreSQL raised', () => {
	it.each([
		['PT404', 'JobNotFoundError'],
		['PT410', 'JobCancelledError'],
		['22023', 'InvalidJobInputError'],
		['SJ001', 'IllegalTransitionError'],
	])('raise sqlstate %s becomes %s, with DETAIL and HINT', async (code, name) => {
		const raised = await db.sql
			.unsafe(
				`do $$ begin raise sqlstate '${code}' using message = 'raised here', detail = 'field=kind', hint = 'try again'; end $$`,
			)
			.catch((e: unknown) => e);
		expect(fromPostgresError(raised)).toMatchObject({
			name,
			message: 'raised here',
			details: 'field=kind',
			hint: 'try again',
		});
	});

	it('a NUL byte in text (22021 from postgres.js, 22P05 from JSON) becomes InvalidJobInputError, naming the byte', async () => {
		const inText = await db.sql`select job_enqueue(${'ok\u0000bad'})`.catch((e: unknown) => e);
		expect(fromPostgresError(inText)).toMatchObject({ name: 'InvalidJobInputError', code: 'invalid_input' });
		expect((fromPostgresError(inText) as Error).message).toMatch(/0x00/);
		const inJson = await db.sql`select ${'{"kind": "ok\\u0000bad"}'}::text::jsonb ->> 'kind'`.catch((e: unknown) => e);
		expect(fromPostgresError(inJson)).toMatchObject({ name: 'InvalidJobInputError', code: 'invalid_input' });
		expect((fromPostgresError(inJson) as Error & { details: string }).details).toMatch(/\\u0000/);
	});

	it('a missing table (42P01) becomes UnknownJobTableError', async () => {
		const raised = await db.sql`select * from public.no_such_job_table`.catch((e: unknown) => e);
		expect(fromPostgresError(raised)).toMatchObject({ name: 'UnknownJobTableError', code: 'unknown_job_table' });
	});
});
