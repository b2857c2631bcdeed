/**
 * `npm run gen:docs`: rewrites the generated part of docs/sql-api.md (every
 * SQL function with its real signature, grants and comment) from a freshly
 * migrated database, on the embedded PostgreSQL (or DATABASE_URL's server).
 * Run it after adding a migration; test/docs/sql-reference.test.ts fails until you do.
 */
import { relative } from 'node:path';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { projectRoot } from '../src/local/postgres/migrate.ts';
import { SQL_API_PAGE, writeSqlApiPage } from '../src/local/docs/sql-reference.ts';
import { withProductDatabase } from '../src/local/typegen/product-database.ts';

const server = await startLocalPostgres();
try {
	const text = await withProductDatabase(server.url, (url) => writeSqlApiPage(url));
	console.log(`wrote ${relative(projectRoot, SQL_API_PAGE)} (${text.split('\n').length} lines)`);
} finally {
	await server.stop();
}
