/**
 * `npm run gen:migration`: writes supabase/migrations/<timestamp>_baseline.sql
 * from supabase/schemas/*.sql (src/local/postgres/baseline.ts). Keeps the
 * baseline's timestamp when it exists (`-- --new-timestamp` names it now).
 * Refuses once package.json says 0.2.0 (the baseline is frozen: write a new
 * migration), and while supabase/migrations holds any other migration (fold
 * its changes into supabase/schemas, delete it, then run this again).
 * `-- --check` writes nothing and fails when the baseline is not what the schema
 * files generate.
 */
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { baselineFile, baselineFileName, baselineText, isFrozen } from '../src/local/postgres/baseline.ts';
import { migrationsDir, projectRoot } from '../src/local/postgres/migrate.ts';

const args = process.argv.slice(2);
const text = await baselineText();
const current = await baselineFile();

if (args.includes('--check')) {
	const same = current !== null && (await readFile(current, 'utf8')) === text;
	console.log(
		same
			? `${relative(projectRoot, current!)} is what supabase/schemas generates`
			: 'the baseline is not what supabase/schemas generates: run npm run gen:migration',
	);
	process.exit(same ? 0 : 1);
}

const { version } = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
if (isFrozen(version)) {
	console.error(
		`package.json says ${version}: the baseline is frozen. Write a new migration (supabase migration new <name>) and the same change in supabase/schemas.`,
	);
	process.exit(1);
}
const others = (await readdir(migrationsDir)).filter((f) => f.endsWith('.sql') && join(migrationsDir, f) !== current);
if (others.length) {
	console.error(
		`supabase/migrations holds migrations besides the baseline: ${others.join(', ')}.\nFold each into supabase/schemas (docs/architecture.md, "Where the SQL lives"), delete it, then run this again.`,
	);
	process.exit(1);
}
const target =
	current && !args.includes('--new-timestamp') ? current : join(migrationsDir, baselineFileName(new Date()));
if (current && current !== target) await rm(current);
await writeFile(target, text);
console.log(
	`wrote ${relative(projectRoot, target)} (${text.split('\n').length} lines) from supabase/schemas (${basename(target)})`,
);
