/**
 * `npm run gen:types`: writes src/lib/database.types.ts with Supabase's own
 * generator (@supabase/postgres-meta) over a freshly migrated database, on the
 * embedded PostgreSQL (or DATABASE_URL's server). Run it after adding a
 * migration; test/types/generated-types.test.ts fails until you do.
 */
import { writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { projectRoot } from '../src/local/postgres/migrate.ts';
import { databaseTypesFile, DATABASE_TYPES_FILE } from '../src/local/typegen/postgres-meta.ts';
import { withProductDatabase } from '../src/local/typegen/product-database.ts';

const server = await startLocalPostgres();
try {
	const text = await withProductDatabase(server.url, (url) => databaseTypesFile(url));
	await writeFile(DATABASE_TYPES_FILE, text);
	console.log(`wrote ${relative(projectRoot, DATABASE_TYPES_FILE)} (${text.split('\n').length} lines)`);
} finally {
	await server.stop();
}
