// `npx supabase-jobs doctor`: checks a project's database and its worker
// function against what this installed version needs, one line per check
// (✓ passed, ✗ failed with the exact fix, – not checked because an earlier
// check failed), and exits 1 unless every check passed. It only reads: the
// one request with effect is a signed wake-up for a job that cannot exist.
import { createHmac } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import postgres from 'postgres';
import {
	FUNCTION_DIR,
	GENERATED_MIGRATIONS,
	MIGRATION_INFIX,
	PACKAGE_ROOT,
	packageMigrations,
	VAULT_SECRETS,
} from './init.mjs';
import { checkAnonymousSignIns, checkMaxRows, checkMessagePartitions } from './doctor-limits.mjs';
import { kindNamesIn } from './kinds-file.mjs';
import { functionNpmIssues } from './npm-pins.mjs';
import { realtimePolicies, scheduleNames } from './package-facts.mjs';

/**
 * @typedef {'ok' | 'fail' | 'skip'} Outcome
 * @typedef {{ label: string; outcome: Outcome; detail: string; fix?: string; notes?: string[] }} Check
 * @typedef {import('postgres').Sql} Sql
 */

const MARK = { ok: '✓', fail: '✗', skip: '–' };

/** A wake-up for the nil job: the worker authenticates it, finds no such job and does nothing. */
const PROBE_BODY = JSON.stringify({ job_id: '00000000-0000-0000-0000-000000000000', reason: 'doctor' });
const FUNCTION_TIMEOUT_MS = 15_000;

/** @param {string} label @param {string} detail */
const ok = (label, detail) => ({ label, outcome: /** @type {Outcome} */ ('ok'), detail });
/** @param {string} label @param {string} detail @param {string} fix */
const fail = (label, detail, fix) => ({ label, outcome: /** @type {Outcome} */ ('fail'), detail, fix });
/** @param {string} label @param {string} detail */
const skip = (label, detail) => ({ label, outcome: /** @type {Outcome} */ ('skip'), detail });

/** @param {string} s */
const quote = (s) => `'${s.replaceAll("'", "''")}'`;

/**
 * Migrations: every one of the installed package recorded by the CLI, as init
 * names it (`<timestamp>_supabase_jobs_<name>`) or as the package ships it
 * (its own version and name: the package's repository).
 * @param {Sql} sql
 * @param {{ version: string; migrations: { version: string; name: string; file: string }[]; cwd: string }} facts
 */
async function checkMigrations(sql, { version, migrations, cwd }) {
	const label = 'migrations';
	const [{ present }] = await sql`select to_regclass('supabase_migrations.schema_migrations') is not null as present`;
	const rows = present ? await sql`select version, name from supabase_migrations.schema_migrations` : [];
	const names = new Set(rows.map((r) => r.name));
	const shipped = new Set(rows.map((r) => `${r.version}_${r.name}`));
	const missing = migrations.filter(
		(m) => !names.has(`${MIGRATION_INFIX}${m.name}`) && !shipped.has(`${m.version}_${m.name}`),
	);
	const known = new Set([...migrations.map((m) => `${MIGRATION_INFIX}${m.name}`), GENERATED_MIGRATIONS.extensions]);
	const unknown = rows.filter((r) => r.name?.startsWith(MIGRATION_INFIX) && !known.has(r.name)).map((r) => r.name);
	if (unknown.length) {
		return fail(
			label,
			`the database has supabase-jobs migrations that ${version} does not ship (${unknown.join(', ')}): it was migrated by a newer version`,
			'npm i supabase-jobs@<the version that wrote them> (the package and the database must agree)',
		);
	}
	if (!missing.length) return ok(label, `all ${migrations.length} of supabase-jobs ${version} applied`);
	// The fix depends on whether the project folder already has the files.
	const dir = join(cwd, 'supabase/migrations');
	const files = existsSync(dir) ? readdirSync(dir) : [];
	const inFolder = missing.every((m) => files.some((f) => f.endsWith(`_${MIGRATION_INFIX}${m.name}.sql`)));
	return fail(
		label,
		`${missing.length} of supabase-jobs ${version} not applied: ${missing.map((m) => m.name).join(', ')}`,
		inFolder ? 'supabase db push' : 'npx supabase-jobs upgrade && supabase db push',
	);
}

/**
 * An extension by the function the package calls: present on Supabase as the
 * extension (pg_extension), locally also as a stand-in schema without one.
 * @param {Sql} sql
 * @param {{ label: string; extension: string; fn: string; schema: string; need: string; fix: string }} e
 */
async function checkExtension(sql, { label, extension, fn, schema, need, fix }) {
	const [row] = await sql`
		select to_regprocedure(${fn}) is not null as present,
		       (select extversion from pg_extension where extname = ${extension}) as version,
		       obj_description(to_regnamespace(${schema}), 'pg_namespace') as note`;
	if (!row.present) return fail(label, `not installed (${fn} is missing): ${need}`, fix);
	if (row.version) return ok(label, `extension ${extension} ${row.version}`);
	const standIn = /^Local stand-in/.test(row.note ?? '');
	return ok(label, `${fn} present without the extension${standIn ? ' (the local stand-in)' : ''}`);
}

/**
 * The package's describeCron from its build (dist/, what an installed package
 * has); null where there is none (a checkout that was never built), and the
 * expressions are shown as written.
 * @returns {Promise<((expr: string) => string | null)>}
 */
async function cronDescriber() {
	try {
		const { describeCron } = await import(new URL('../dist/index.js', import.meta.url).href);
		return (expr) => {
			try {
				return describeCron(expr, process.env.LANG ?? 'en');
			} catch {
				return null;
			}
		};
	} catch {
		return () => null;
	}
}

/**
 * The recurring schedules declared in code (supabase_jobs.schedules), one line
 * each with the expression in words and whether its pg_cron entry is active.
 * @param {Sql} sql
 */
async function recurringLines(sql) {
	const [{ present }] = await sql`select to_regclass('supabase_jobs.schedules') is not null as present`;
	if (!present) return [];
	const rows = await sql`
		select s.name, s.kind, s.cron, s.job_table, coalesce(j.active, false) as active
		  from supabase_jobs.schedules s
		  left join cron.job j on j.jobname = 'supabase-jobs-schedule:' || s.name
		 order by s.name`;
	const describe = await cronDescriber();
	return rows.map((r) => {
		const words = describe(r.cron);
		const table = r.job_table === 'jobs' ? '' : ` in ${r.job_table}`;
		return `recurring ${r.name}: '${r.cron}'${words ? ` (${words}, UTC)` : ' (UTC)'} -> ${r.kind}${table}${r.active ? '' : ' [not installed: select supabase_jobs.install_schedules();]'}`;
	});
}

/**
 * @param {Sql} sql
 * @param {string[]} expected
 * @param {boolean} cronPresent
 */
async function checkSchedules(sql, expected, cronPresent) {
	const label = 'schedules';
	if (!cronPresent) return skip(label, 'not checked: they need pg_cron');
	const rows = await sql`select jobname, active from cron.job where jobname = any(${expected})`;
	const active = new Set(rows.filter((r) => r.active).map((r) => r.jobname));
	const missing = expected.filter((n) => !active.has(n));
	if (!expected.length) {
		return fail(
			label,
			'this version names no schedule (its install_schedules() could not be read)',
			'report this to supabase-jobs',
		);
	}
	if (!missing.length) return { ...ok(label, expected.join(', ')), notes: await recurringLines(sql) };
	const inactive = missing.filter((n) => rows.some((r) => r.jobname === n));
	return fail(
		label,
		`${missing.join(', ')} ${inactive.length === missing.length ? 'inactive' : 'not installed'}`,
		'select supabase_jobs.install_schedules();   (SQL editor)',
	);
}

/**
 * The names of the two secrets, read where the database's wake-ups read them
 * (vault.decrypted_secrets; only the name column, so nothing is decrypted).
 * @param {Sql} sql
 */
async function vaultNames(sql) {
	const [{ present }] = await sql`select to_regclass('vault.decrypted_secrets') is not null as present`;
	if (!present) return null;
	const rows = await sql`select name from vault.decrypted_secrets where name = any(${Object.values(VAULT_SECRETS)})`;
	return new Set(rows.map((r) => r.name));
}

/** @param {Set<string> | null} names */
function checkVault(names) {
	const label = 'Vault secrets';
	const wanted = Object.values(VAULT_SECRETS);
	if (names === null) {
		return fail(
			label,
			'Vault is not installed (no vault.decrypted_secrets)',
			'create extension if not exists supabase_vault;   (SQL editor)',
		);
	}
	const missing = wanted.filter((n) => !names.has(n));
	if (!missing.length) return ok(label, wanted.join(', '));
	const fixes = {
		[VAULT_SECRETS.url]: `select vault.create_secret('https://<project-ref>.supabase.co/functions/v1/jobs-worker', '${VAULT_SECRETS.url}');`,
		[VAULT_SECRETS.secret]: `select vault.create_secret('<the JOBS_WORKER_SECRET of the function>', '${VAULT_SECRETS.secret}');`,
	};
	return fail(
		label,
		`${missing.join(', ')} missing`,
		`${missing.map((n) => fixes[n]).join('\n         ')}   (SQL editor)`,
	);
}

/**
 * @param {string} url
 * @param {string | null} token
 */
async function post(url, token) {
	/** @type {Record<string, string>} */
	const headers = { 'content-type': 'application/json' };
	if (token) headers.authorization = `Bearer ${token}`;
	const res = await fetch(url, {
		method: 'POST',
		headers,
		body: PROBE_BODY,
		signal: AbortSignal.timeout(FUNCTION_TIMEOUT_MS),
	});
	const text = await res.text();
	let json = null;
	try {
		json = JSON.parse(text);
	} catch {
		// not JSON: not the worker's answer
	}
	return { status: res.status, json };
}

/**
 * The token the database's kick signs (`v1.<seconds>.<hex HMAC-SHA256>`),
 * computed by the database itself so the secret never leaves it; signed here
 * only where the database lacks supabase_jobs.kick_token.
 * @param {Sql} sql
 */
async function signedToken(sql) {
	const at = Math.floor(Date.now() / 1000);
	const [{ has }] = await sql`select to_regprocedure('supabase_jobs.kick_token(text, bigint)') is not null as has`;
	if (has) {
		const [row] = await sql`
			select supabase_jobs.kick_token(s.decrypted_secret, ${at}::bigint) as token
			  from vault.decrypted_secrets s where s.name = ${VAULT_SECRETS.secret}`;
		return row?.token ?? null;
	}
	const [row] =
		await sql`select s.decrypted_secret from vault.decrypted_secrets s where s.name = ${VAULT_SECRETS.secret}`;
	if (!row) return null;
	return `v1.${at}.${createHmac('sha256', row.decrypted_secret).update(`v1.${at}`).digest('hex')}`;
}

/**
 * The worker function: refuses a call without the secret with its own 401,
 * and accepts a wake-up signed as the database signs them (202).
 * @param {Sql} sql
 * @param {{ functionUrl: string | null; vault: Set<string> | null }} facts
 */
async function checkFunction(sql, { functionUrl, vault }) {
	const label = 'worker function';
	let url = functionUrl;
	if (!url && vault?.has(VAULT_SECRETS.url)) {
		const [row] =
			await sql`select s.decrypted_secret as url from vault.decrypted_secrets s where s.name = ${VAULT_SECRETS.url}`;
		url = row?.url ?? null;
	}
	if (!url) return skip(label, `not checked: no URL (${VAULT_SECRETS.url} is not in Vault; or pass --function-url)`);
	const deploy = 'supabase functions deploy jobs-worker';
	let unsigned;
	try {
		unsigned = await post(url, null);
	} catch (e) {
		const err = /** @type {Error & { cause?: { code?: string } }} */ (e);
		return fail(
			label,
			`${url} does not answer (${err.cause?.code ?? err.name}: ${err.message})`,
			`${deploy}   (and check the URL in Vault's ${VAULT_SECRETS.url})`,
		);
	}
	if (unsigned.status === 404)
		return fail(
			label,
			`${url} answers 404: no function there`,
			`${deploy}   (and check the URL in Vault's ${VAULT_SECRETS.url})`,
		);
	if (unsigned.status === 401 && unsigned.json?.error !== 'unauthorized') {
		return fail(
			label,
			`${url} answers 401 from Supabase's gateway, not the worker: JWT verification is on`,
			`${deploy} --no-verify-jwt   (and verify_jwt = false under [functions.jobs-worker] in supabase/config.toml)`,
		);
	}
	if (unsigned.status !== 401) {
		return fail(
			label,
			`${url} answers ${unsigned.status} to a call without the secret (the worker answers 401): it is not the jobs-worker, or an old one`,
			`${deploy}   (and check the URL in Vault's ${VAULT_SECRETS.url})`,
		);
	}
	if (!vault?.has(VAULT_SECRETS.secret))
		return skip(
			label,
			`${url} refuses a call without the secret (401); a signed wake-up not checked: ${VAULT_SECRETS.secret} is not in Vault`,
		);
	const token = await signedToken(sql);
	const signed = await post(url, token);
	if (signed.status === 202 && signed.json?.accepted === true) {
		return ok(label, `${url} refuses a call without the secret (401) and accepts a signed wake-up (202)`);
	}
	if (signed.status === 401) {
		return fail(
			label,
			`${url} refuses a wake-up signed with Vault's ${VAULT_SECRETS.secret}: the function's JOBS_WORKER_SECRET is another value`,
			`supabase secrets set JOBS_WORKER_SECRET=<the value of ${VAULT_SECRETS.secret} in Vault>`,
		);
	}
	return fail(
		label,
		`${url} answers ${signed.status} to a signed wake-up (the worker answers 202)`,
		`read its logs (dashboard: Edge Functions -> jobs-worker -> Logs); a worker without ` +
			`JOBS_WORKER_SECRET or SUPABASE_DB_URL does not start: supabase secrets set JOBS_WORKER_SECRET=<the ` +
			`value of ${VAULT_SECRETS.secret}>`,
	);
}

/**
 * The npm packages the worker function imports besides this one (the driver,
 * zod): installed at versions the package supports, and matching the pins of
 * the function's deno.json (Deno runs only what node_modules holds: a pin
 * nothing there matches, and the function does not start).
 * @param {{ cwd: string; dependencies: Record<string, string> }} facts
 * @returns {Check}
 */
function checkFunctionPackages({ cwd, dependencies }) {
	const label = 'worker packages';
	const functionDir = join(cwd, FUNCTION_DIR);
	const { pins, issues } = functionNpmIssues(dependencies, functionDir);
	if (issues.length) return fail(label, issues.map((i) => i.problem).join('; '), issues.map((i) => i.fix).join('; '));
	const found = pins.map((p) => `${p.name} ${p.installed}`).join(', ');
	const pinned = existsSync(join(functionDir, 'deno.json')) ? ", as the function's deno.json pins" : '';
	return ok(label, `${found} in node_modules${pinned}`);
}

/**
 * Every kind kinds.ts declares (read from its text, see kinds-file.mjs) is
 * registered for the jobs table.
 * @param {Sql} sql
 * @param {{ kindsPath: string; cwd: string }} facts
 */
async function checkKinds(sql, { kindsPath, cwd }) {
	const label = 'kinds';
	const shown = relative(cwd, kindsPath) || kindsPath;
	if (!existsSync(kindsPath)) {
		return fail(
			label,
			`no ${shown} to read the app's kinds from`,
			'run doctor in the project folder (--cwd <dir>) or pass --kinds <path to kinds.ts>',
		);
	}
	const { names, unreadable } = kindNamesIn(await readFile(kindsPath, 'utf8'));
	const unread = unreadable.length ? `; not checked (name not a string literal): line ${unreadable.join(', ')}` : '';
	if (!names.length && !unreadable.length) {
		return fail(label, `${shown} declares no kind`, "declare each kind with defineJobKind({ name: '<kind>', params })");
	}
	const [{ present }] = await sql`select to_regclass('supabase_jobs.job_kinds') is not null as present`;
	if (!present) return skip(label, 'not checked: the registry (supabase_jobs.job_kinds) needs the migrations');
	const rows = await sql`select kind from supabase_jobs.job_kinds where job_table = 'jobs'`;
	const registered = new Set(rows.map((r) => r.kind));
	if (registered.has('*'))
		return ok(label, `${names.join(', ')} (the jobs table accepts any kind: '*' is registered)${unread}`);
	const missing = names.filter((n) => !registered.has(n));
	if (!missing.length) return ok(label, `${names.join(', ')} of ${shown} registered${unread}`);
	return fail(
		label,
		`${missing.join(', ')} of ${shown} not registered: signed-in users cannot enqueue ${missing.length > 1 ? 'them' : 'it'}`,
		`supabase migration new register_job_kinds, with:\n${missing.map((k) => `           select supabase_jobs.register_job_kind(${quote(k)});`).join('\n')}\n         then supabase db push`,
	);
}

/**
 * @param {Sql} sql
 * @param {Map<string, string>} expected policy name -> its create statement
 */
async function checkRealtime(sql, expected) {
	const label = 'Realtime policies';
	const rows = await sql`select policyname from pg_policies where schemaname = 'realtime' and tablename = 'messages'`;
	const present = new Set(rows.map((r) => r.policyname));
	const missing = [...expected.keys()].filter((n) => !present.has(n));
	if (!missing.length) return ok(label, `${[...expected.keys()].join(', ')} on realtime.messages`);
	return fail(
		label,
		`${missing.join(', ')} missing on realtime.messages: no one can watch a job`,
		`${missing.map((n) => (expected.get(n) ?? '').replace(/\n\s*/g, ' ')).join('\n         ')}   (SQL editor)`,
	);
}

/** @param {string} url */
function describeDatabase(url) {
	try {
		const u = new URL(url);
		return `${decodeURIComponent(u.username) || 'postgres'}@${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
	} catch {
		return '(the given connection string)';
	}
}

/**
 * Runs every check and prints them; returns the exit code (0 only when all passed).
 * @param {{ dbUrl?: string | null; functionUrl?: string | null; cwd: string; kinds?: string | null; packageRoot?: string; log?: (line: string) => void }} options
 */
export async function runDoctor(options) {
	const log = options.log ?? console.log;
	const packageRoot = options.packageRoot ?? PACKAGE_ROOT;
	const { version, dependencies } = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8'));
	const dbUrl = options.dbUrl ?? process.env.SUPABASE_DB_URL ?? null;
	if (!dbUrl) {
		log(
			"supabase-jobs doctor: which database? Pass --db-url '<connection string>' or set SUPABASE_DB_URL (dashboard -> Connect).",
		);
		return 2;
	}
	const cwd = resolve(options.cwd);
	const kindsPath = resolve(cwd, options.kinds ?? join(FUNCTION_DIR, 'kinds.ts'));
	log(`supabase-jobs doctor (supabase-jobs ${version})\n  database: ${describeDatabase(dbUrl)}`);
	const sql = postgres(dbUrl, {
		max: 1,
		prepare: false,
		onnotice: () => {},
		connect_timeout: 15,
		connection: { application_name: 'supabase-jobs doctor' },
	});
	/** @type {Check[]} */
	const checks = [];
	const print = (/** @type {Check} */ c) => {
		checks.push(c);
		log(`${MARK[c.outcome]} ${c.label}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}`);
		for (const note of c.notes ?? []) log(`    ${note}`);
	};
	try {
		try {
			await sql`select 1`;
		} catch (e) {
			print(
				fail(
					'database',
					`cannot connect (${/** @type {Error} */ (e).message})`,
					'check --db-url / SUPABASE_DB_URL (dashboard -> Connect: the direct or session pooler string)',
				),
			);
			return 1;
		}
		const migrations = await packageMigrations(packageRoot);
		print(await checkMigrations(sql, { version, migrations, cwd }));
		print(
			await checkExtension(sql, {
				label: 'pg_net',
				extension: 'pg_net',
				fn: 'net.http_post(text, jsonb, jsonb, jsonb, integer)',
				schema: 'net',
				need: 'enqueues do not wake the worker',
				fix: 'create extension if not exists pg_net with schema extensions;   (SQL editor)',
			}),
		);
		const cron = await checkExtension(sql, {
			label: 'pg_cron',
			extension: 'pg_cron',
			fn: 'cron.schedule(text, text, text)',
			schema: 'cron',
			need: 'no backstop, no reclaim of dead workers, no cleanup',
			fix: 'create extension if not exists pg_cron with schema pg_catalog;   then: select supabase_jobs.install_schedules();   (SQL editor)',
		});
		print(cron);
		print(await checkSchedules(sql, scheduleNames(migrations), cron.outcome === 'ok'));
		const vault = await vaultNames(sql);
		print(checkVault(vault));
		print(await checkFunction(sql, { functionUrl: options.functionUrl ?? null, vault }));
		print(await checkKinds(sql, { kindsPath, cwd }));
		print(checkFunctionPackages({ cwd, dependencies }));
		print(await checkRealtime(sql, realtimePolicies(migrations)));
		print(await checkMessagePartitions(sql));
		print(await checkMaxRows(sql, { cwd }));
		print(checkAnonymousSignIns({ cwd }));
	} finally {
		await sql.end({ timeout: 5 });
	}
	const failed = checks.filter((c) => c.outcome !== 'ok').length;
	log(failed ? `${failed} of ${checks.length} checks did not pass.` : `All ${checks.length} checks passed.`);
	return failed ? 1 : 0;
}
