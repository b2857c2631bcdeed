/**
 * `npm run fold:migration -- supabase/migrations/<file>.sql`: folds a migration
 * into supabase/schemas before 0.2.0 (src/local/postgres/fold.ts): its functions
 * replace their one definition there, with their comments and `alter function
 * ... set` settings. Prints what it could not place (grants, new functions,
 * tables, data) for you to put in the file of its concern. Then delete the
 * migration and run `npm run gen:migration` and test/sql/schema-files.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { foldMigration } from '../src/local/postgres/fold.ts';

const path = process.argv[2];
if (!path) {
	console.error('usage: npm run fold:migration -- supabase/migrations/<file>.sql');
	process.exit(1);
}
const r = await foldMigration(await readFile(path, 'utf8'));
for (const f of r.replaced) console.log(`replaced ${f.name} in supabase/schemas/${f.file}`);
if (r.left.length) {
	console.log(
		`\nleft for you to place in supabase/schemas (a grant goes at the end of the file that defines its object):`,
	);
	for (const s of r.left) console.log(`  ${s}`);
}
console.log(`\nnext: delete ${path}, run npm run gen:migration, then test/sql/schema-files.test.ts`);
process.exit(r.left.length ? 2 : 0);
