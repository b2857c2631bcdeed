/**
 * Applies the compat bootstrap and supabase/migrations to a database, recording
 * each migration in supabase_migrations.schema_migrations as the Supabase CLI does;
 * or the schema files of supabase/schemas (what the migrations are generated
 * from); then, for the demo and the tests, the demo's own SQL (src/demo/sql).
 * Local tooling for tests and the demo; a real project uses `supabase db push`.
 */
import postgres from 'postgres';
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const projectRoot = resolve(here, '../../..');
export const migrationsDir = join(projectRoot, 'supabase/migrations');
/** The schema, one file per concern, applied in file-name order (numeric prefixes). */
export const schemasDir = join(projectRoot, 'supabase/schemas');
/** The demo app's own tables and kinds: not the package's, applied after it. */
export const demoSqlDir = join(projectRoot, 'src/demo/sql');

export interface MigrationFile {
	version: string;
	name: string;
	path: string;
}

/** Lists `<version>_<name>.sql` files in apply order. */
export async function listMigrations(dir = migrationsDir): Promise<MigrationFile[]> {
	const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
	return files.map((file) => {
		const match = /^(\d{14})_(.+)\.sql$/.exec(file);
		if (!match) throw new Error(`migration file name must be <14-digit UTC timestamp>_<name>.sql: ${file}`);
		return { version: match[1]!, name: match[2]!, path: join(dir, file) };
	});
}

/**
 * Stand-ins for the extensions a Supabase project has and a plain PostgreSQL
 * lacks, each applied only where the real thing is absent (see each file's header).
 */
const standIns: { file: string; needed: string }[] = [
	{ file: 'compat-vault.sql', needed: `select to_regnamespace('vault') is null as needed` },
	{ file: 'compat-net.sql', needed: `select to_regnamespace('net') is null as needed` },
	// Where pg_cron is preloaded the real extension can be created: no stand-in then.
	{
		file: 'compat-cron.sql',
		needed: `select to_regnamespace('cron') is null and current_setting('shared_preload_libraries') !~ '(^|[ ,])pg_cron($|[ ,])' as needed`,
	},
];

/** Runs the compat bootstrap and the needed stand-ins (idempotent; a no-op where Supabase's objects exist). */
export async function applyCompat(url: string): Promise<void> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		await sql.unsafe(await readFile(join(here, 'compat.sql'), 'utf8'));
		for (const standIn of standIns) {
			const [row] = await sql.unsafe<{ needed: boolean }[]>(standIn.needed);
			if (!row?.needed) continue;
			const text = await readFile(join(here, standIn.file), 'utf8');
			await sql.begin((tx) => tx.unsafe(text));
		}
	} finally {
		await sql.end();
	}
}

/** The `.sql` files of `dir`, in name order (paths). */
export async function listSqlFiles(dir: string): Promise<string[]> {
	return (await readdir(dir))
		.filter((f) => f.endsWith('.sql'))
		.sort()
		.map((f) => join(dir, f));
}

/** Applies every schema file of `dir` in name order, in one transaction (a database built without migrations). */
export async function applySchemaFiles(url: string, dir = schemasDir): Promise<void> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		const texts = await Promise.all((await listSqlFiles(dir)).map((f) => readFile(f, 'utf8')));
		await sql.begin(async (tx) => {
			for (const text of texts) await tx.unsafe(text);
		});
	} finally {
		await sql.end();
	}
}

/**
 * Applies the demo's own SQL (src/demo/sql, in name order). Each file is
 * idempotent (`if not exists`, `drop ... if exists` first), so the durable demo
 * database takes it again at every start.
 */
export async function applyDemoSql(url: string, dir = demoSqlDir): Promise<void> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		for (const file of await listSqlFiles(dir)) {
			const text = await readFile(file, 'utf8');
			await sql.begin((tx) => tx.unsafe(text));
		}
	} finally {
		await sql.end();
	}
}

/** Applies every migration not yet recorded, each in its own transaction. */
export async function applyMigrations(url: string, dir = migrationsDir): Promise<string[]> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	const applied: string[] = [];
	try {
		const done = new Set(
			(await sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations`).map(
				(r) => r.version,
			),
		);
		const migrations = await listMigrations(dir);
		// Versions this database recorded that the directory no longer has: it was built
		// from the migrations the baseline replaced, and cannot take the baseline.
		const gone = [...done].filter((v) => !migrations.some((m) => m.version === v));
		for (const m of migrations) {
			if (done.has(m.version)) continue;
			const text = await readFile(m.path, 'utf8');
			await sql
				.begin(async (tx) => {
					await tx.unsafe(text);
					await tx`insert into supabase_migrations.schema_migrations (version, name, statements) values (${m.version}, ${m.name}, ${[text]})`;
				})
				.catch((e: unknown) => {
					if (!gone.length) throw e;
					throw new Error(
						`${m.version}_${m.name}.sql does not apply: this database recorded migrations that are no longer in ` +
							`${dir} (${gone.slice(0, 3).join(', ')}${gone.length > 3 ? ', ...' : ''}), so it predates the ` +
							`baseline. Build it again (the local demo: delete .local/demo-postgres).`,
						{ cause: e },
					);
				});
			applied.push(m.version);
		}
	} finally {
		await sql.end();
	}
	return applied;
}

/** Compat bootstrap, then migrations, then (unless `demo` is false) the demo's own SQL. */
export async function prepareDatabase(url: string, { demo = true }: { demo?: boolean } = {}): Promise<void> {
	await applyCompat(url);
	await applyMigrations(url);
	if (demo) await applyDemoSql(url);
}

/** Returns `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
	const u = new URL(url);
	u.pathname = `/${database}`;
	return u.toString();
}
