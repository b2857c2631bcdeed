/**
 * `npx supabase-jobs doctor`, run as a user runs it (node bin/supabase-jobs.mjs
 * doctor), against the local stack set up the way a user's project is: a
 * folder `init` wrote, its migrations applied to a fresh database (with the
 * stand-ins for pg_net, pg_cron and Vault), the worker function under Deno
 * behind the stand-in's /functions/v1, the two Vault secrets. Healthy, every
 * check passes; with each prerequisite broken in turn, exactly that check
 * fails (a check that depends on it says it was not checked) and the exit
 * code is 1.
 */
import postgres from 'postgres';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { packageMigrations } from '../../bin/init.mjs';
import { realtimePolicies, scheduleNames } from '../../bin/package-facts.mjs';
import { applyCompat, applyMigrations, withDatabase } from '../../src/local/postgres/migrate.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { DEMO_JWT_SECRET } from '../../src/local/demo/stack.ts';
import { setWorkerSecrets } from '../kick/worker-secrets.ts';
import { freePort, startDenoWorker, WORKER_SECRET, type DenoWorker } from '../worker/helpers/deno-worker.ts';

const bin = resolve('bin/supabase-jobs.mjs');
const KINDS = 'supabase/functions/jobs-worker/kinds.ts';
const LABELS = [
	'migrations',
	'pg_net',
	'pg_cron',
	'schedules',
	'Vault secrets',
	'worker function',
	'kinds',
	'worker packages',
	'Realtime policies',
	'realtime.messages partitions',
	'max_rows',
	'anonymous sign-ins',
] as const;
type Label = (typeof LABELS)[number];

let project: string;
let dbName: string;
let dbUrl: string;
let sql: postgres.Sql;
let worker: DenoWorker;
let standin: Standin;
let functionUrl: string;

interface DoctorRun {
	code: number;
	stdout: string;
	/** Label -> mark (✓, ✗, –) of each check line. */
	marks: Map<string, string>;
}

/** Runs the bin as a user would, with SUPABASE_DB_URL or the given flags. */
function doctor(args: string[] = [], env: Record<string, string> = {}): Promise<DoctorRun> {
	return new Promise((done, reject) => {
		execFile(
			process.execPath,
			[bin, 'doctor', '--cwd', project, ...args],
			{ env: { ...process.env, SUPABASE_DB_URL: '', ...env }, timeout: 60_000 },
			(error, stdout) => {
				if (error && typeof error.code !== 'number') return reject(error);
				const marks = new Map<string, string>();
				for (const line of stdout.split('\n')) {
					const m = /^([✓✗–]) ([^:]+):/.exec(line);
					if (m) marks.set(m[2]!, m[1]!);
				}
				done({ code: typeof error?.code === 'number' ? error.code : 0, stdout, marks });
			},
		);
	});
}

const withDb = () => ['--db-url', dbUrl];

beforeAll(async () => {
	project = await mkdtemp(join(tmpdir(), 'sj-doctor-'));
	await mkdir(join(project, 'supabase'), { recursive: true });
	await writeFile(join(project, 'supabase/config.toml'), 'project_id = "doctor"\n');
	// The project's node_modules (the driver and zod the function imports): the repository's.
	await symlink(resolve('node_modules'), join(project, 'node_modules'));
	await new Promise<void>((done, reject) =>
		execFile(process.execPath, [bin, 'init', '--cwd', project], (e) => (e ? reject(e) : done())),
	);

	const adminUrl = inject('adminUrl');
	dbName = `sj_doctor_${randomUUID().slice(0, 8)}`;
	const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
	try {
		await admin.unsafe(`create database ${dbName}`);
	} finally {
		await admin.end();
	}
	dbUrl = withDatabase(adminUrl, dbName);
	await applyCompat(dbUrl);
	await applyMigrations(dbUrl, join(project, 'supabase/migrations'));
	sql = postgres(dbUrl, { max: 2, onnotice: () => {} });

	worker = await startDenoWorker(dbUrl);
	standin = await createStandin({
		databaseUrl: dbUrl,
		jwtSecret: DEMO_JWT_SECRET,
		functions: { 'jobs-worker': { url: worker.url, verifyJwt: false } },
	});
	functionUrl = `${standin.url}/functions/v1/jobs-worker`;
	await setWorkerSecrets(sql, functionUrl, WORKER_SECRET);
});

afterAll(async () => {
	await standin?.close();
	await worker?.stop();
	await sql?.end({ timeout: 5 });
	if (dbName) {
		const admin = postgres(inject('adminUrl'), { max: 1, onnotice: () => {} });
		await admin.unsafe(`drop database if exists ${dbName} with (force)`);
		await admin.end();
	}
	if (project) await rm(project, { recursive: true, force: true });
});

describe('npx supabase-jobs doctor', () => {
	it('on a healthy project every check passes, one line each, exit 0, and no secret value is printed', async () => {
		const run = await doctor([], { SUPABASE_DB_URL: dbUrl });
		console.log(`[doctor output, healthy]\n${run.stdout}`);
		expect(run.code).toBe(0);
		expect([...run.marks.keys()]).toEqual([...LABELS]);
		expect([...run.marks.values()].every((m) => m === '✓')).toBe(true);
		expect(run.stdout).toContain(`All ${LABELS.length} checks passed.`);
		expect(run.stdout).toContain('example.word-count');
		expect(run.stdout).not.toContain(WORKER_SECRET);
		expect(run.stdout).not.toMatch(/fix:/);
	});

	it('lists the recurring schedules under the schedules check: name, expression, kind, and whether pg_cron runs it', async () => {
		await sql`select job_sync_schedules(${sql.json([{ name: 'nightly-report', kind: 'report.build', cron: '0 2 * * *' }])})`;
		try {
			const run = await doctor([], { SUPABASE_DB_URL: dbUrl });
			console.log(`[doctor output, a recurring schedule]\n${run.stdout}`);
			expect(run.marks.get('schedules')).toBe('✓');
			// In words too where the package is built (dist/): "(At 02:00 AM, UTC)".
			expect(run.stdout).toMatch(
				/\n {4}recurring nightly-report: '0 2 \* \* \*' \((At 02:00 AM, )?UTC\) -> report\.build\n/,
			);
		} finally {
			await sql`select job_sync_schedules('[]'::jsonb)`;
		}
	});

	const lastMigration = async () => `supabase_jobs_${(await packageMigrations()).at(-1)!.name}`;
	const reclaim = async () => scheduleNames(await packageMigrations()).find((n) => n.includes('reclaim'))!;
	const rename = (from: string, to: string) => `update vault.secrets set name = '${to}' where name = '${from}'`;

	interface Broken {
		what: string;
		fails: Label;
		/** Checks that depend on the broken one and say they were not checked. */
		notChecked?: Label[];
		/** What the failing line says, and its fix. */
		says: RegExp;
		fix: RegExp;
		/** Breaks it; returns what puts it back. */
		breakIt: () => Promise<() => Promise<unknown>>;
		args?: () => Promise<string[]>;
	}

	let always200: Server | null = null;
	const broken: Broken[] = [
		{
			what: "the function's deno.json pinning a postgres node_modules does not hold (npm i postgres moved it)",
			fails: 'worker packages',
			says: /worker packages: deno\.json maps postgres to npm:postgres@\^9\.0\.0, and node_modules has \d+\.\d+\.\d+$/m,
			fix: /fix: set it to "npm:postgres@\^\d+\.\d+\.\d+"$/m,
			breakIt: async () => {
				const path = join(project, 'supabase/functions/jobs-worker/deno.json');
				const before = await readFile(path, 'utf8');
				await writeFile(path, before.replace(/"npm:postgres@[^"]+"/, '"npm:postgres@^9.0.0"'));
				return () => writeFile(path, before);
			},
		},
		{
			what: 'a migration of this version not applied',
			fails: 'migrations',
			says: /migrations: 1 of supabase-jobs \S+ not applied: \w+$/m,
			fix: /fix: supabase db push$/m,
			breakIt: async () => {
				const name = await lastMigration();
				const [row] = await sql`delete from supabase_migrations.schema_migrations where name = ${name} returning *`;
				return () =>
					sql`insert into supabase_migrations.schema_migrations (version, name, statements) values (${row!.version}, ${row!.name}, ${row!.statements})`;
			},
		},
		{
			what: 'pg_net absent',
			fails: 'pg_net',
			says: /pg_net: not installed \(net\.http_post\(.*\) is missing\)/,
			fix: /fix: create extension if not exists pg_net with schema extensions;/,
			breakIt: async () => {
				await sql`alter schema net rename to net_switched_off`;
				return () => sql`alter schema net_switched_off rename to net`;
			},
		},
		{
			what: 'pg_cron absent',
			fails: 'pg_cron',
			notChecked: ['schedules'],
			says: /pg_cron: not installed/,
			fix: /fix: create extension if not exists pg_cron with schema pg_catalog;.*install_schedules\(\)/,
			breakIt: async () => {
				await sql`alter schema cron rename to cron_switched_off`;
				return () => sql`alter schema cron_switched_off rename to cron`;
			},
		},
		{
			what: 'a schedule missing',
			fails: 'schedules',
			says: /schedules: supabase-jobs-reclaim not installed/,
			fix: /fix: select supabase_jobs\.install_schedules\(\);/,
			breakIt: async () => {
				await sql`select cron.unschedule(${await reclaim()})`;
				return () => sql`select supabase_jobs.install_schedules()`;
			},
		},
		{
			what: 'the Vault secret with the worker URL missing',
			fails: 'Vault secrets',
			notChecked: ['worker function'],
			says: /Vault secrets: supabase_jobs_worker_url missing/,
			fix: /fix: select vault\.create_secret\('https:\/\/<project-ref>\.supabase\.co\/functions\/v1\/jobs-worker', 'supabase_jobs_worker_url'\);/,
			breakIt: async () => {
				await sql.unsafe(rename('supabase_jobs_worker_url', 'switched_off_url'));
				return () => sql.unsafe(rename('switched_off_url', 'supabase_jobs_worker_url'));
			},
		},
		{
			what: 'the Vault secret with the worker secret missing',
			fails: 'Vault secrets',
			notChecked: ['worker function'],
			says: /Vault secrets: supabase_jobs_worker_secret missing/,
			fix: /fix: select vault\.create_secret\('<the JOBS_WORKER_SECRET of the function>', 'supabase_jobs_worker_secret'\);/,
			breakIt: async () => {
				await sql.unsafe(rename('supabase_jobs_worker_secret', 'switched_off_secret'));
				return () => sql.unsafe(rename('switched_off_secret', 'supabase_jobs_worker_secret'));
			},
		},
		{
			what: 'the function down (nothing answers at its URL)',
			fails: 'worker function',
			says: /worker function: http:\/\/127\.0\.0\.1:\d+\/functions\/v1\/jobs-worker does not answer \(ECONNREFUSED/,
			fix: /fix: supabase functions deploy jobs-worker/,
			breakIt: async () => async () => {},
			args: async () => ['--function-url', `http://127.0.0.1:${await freePort()}/functions/v1/jobs-worker`],
		},
		{
			what: 'the function answering 200 without the secret',
			fails: 'worker function',
			says: /answers 200 to a call without the secret/,
			fix: /fix: supabase functions deploy jobs-worker/,
			breakIt: async () => {
				always200 = createServer((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
				await new Promise<void>((done) => always200!.listen(0, '127.0.0.1', done));
				return () => new Promise((done) => always200!.close(done));
			},
			args: async () => {
				const address = always200!.address() as { port: number };
				return ['--function-url', `http://127.0.0.1:${address.port}/functions/v1/jobs-worker`];
			},
		},
		{
			what: "the function's secret differing from Vault's (the signed wake-up refused)",
			fails: 'worker function',
			says: /refuses a wake-up signed with Vault's supabase_jobs_worker_secret/,
			fix: /fix: supabase secrets set JOBS_WORKER_SECRET=<the value of supabase_jobs_worker_secret in Vault>/,
			breakIt: async () => {
				await sql`update vault.secrets set secret = 'another-secret-of-enough-length' where name = 'supabase_jobs_worker_secret'`;
				return () => sql`update vault.secrets set secret = ${WORKER_SECRET} where name = 'supabase_jobs_worker_secret'`;
			},
		},
		{
			what: 'a kind of kinds.ts unregistered',
			fails: 'kinds',
			says: /kinds: example\.word-count of supabase\/functions\/jobs-worker\/kinds\.ts not registered/,
			fix: /select supabase_jobs\.register_job_kind\('example\.word-count'\);/,
			breakIt: async () => {
				await sql`delete from supabase_jobs.job_kinds where kind = 'example.word-count'`;
				return () => sql`select supabase_jobs.register_job_kind('example.word-count')`;
			},
		},
		{
			what: 'kinds.ts declaring a kind no migration registers (drift)',
			fails: 'kinds',
			says: /kinds: example\.summary of supabase\/functions\/jobs-worker\/kinds\.ts not registered/,
			fix: /supabase migration new register_job_kinds, with:\n\s+select supabase_jobs\.register_job_kind\('example\.summary'\);\n\s+then supabase db push/,
			breakIt: async () => {
				const path = join(project, KINDS);
				const before = await readFile(path, 'utf8');
				await writeFile(
					path,
					`${before}\nexport const summary = defineJobKind({\n\tname: 'example.summary',\n\tparams: z.object({ text: z.string() }),\n});\n`,
				);
				return () => writeFile(path, before);
			},
		},
		{
			what: 'the Realtime policy dropped',
			fails: 'Realtime policies',
			says: /Realtime policies: supabase_jobs_read_job_topics missing on realtime\.messages/,
			fix: /fix: create policy supabase_jobs_read_job_topics on realtime\.messages for select to authenticated/,
			breakIt: async () => {
				await sql`alter policy supabase_jobs_read_job_topics on realtime.messages rename to switched_off`;
				return () => sql`alter policy switched_off on realtime.messages rename to supabase_jobs_read_job_topics`;
			},
		},
		{
			what: 'realtime.messages partitioned with no partition for today',
			fails: 'realtime.messages partitions',
			says: /realtime\.messages partitions: no partition holds today's rows \(\d{4}-\d\d-\d\d, UTC\)/,
			fix: /fix: connect a Realtime client .*create table realtime\.messages_\d{4}_\d\d_\d\d partition of realtime\.messages for values from \('[\d-]{10}'\) to \('[\d-]{10}'\);/,
			breakIt: async () => {
				// As on Supabase: partitioned by inserted_at, one partition a day; here only yesterday's.
				const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
				const today = new Date().toISOString().slice(0, 10);
				await sql.unsafe(`alter table realtime.messages rename to messages_switched_off;
				  create table realtime.messages (topic text not null, extension text not null, payload jsonb, event text,
				    private boolean default false, updated_at timestamp not null default now(), inserted_at timestamp not null default now(),
				    id uuid not null default gen_random_uuid(), primary key (id, inserted_at)) partition by range (inserted_at);
				  create table realtime.messages_yesterday partition of realtime.messages for values from ('${yesterday}') to ('${today}');
				  alter table realtime.messages enable row level security;`);
				for (const statement of realtimePolicies(await packageMigrations()).values()) await sql.unsafe(statement);
				return () =>
					sql.unsafe(`drop table realtime.messages; alter table realtime.messages_switched_off rename to messages`);
			},
		},
		{
			what: 'max_rows below the batch size supabaseAdapter sends',
			fails: 'max_rows',
			says: /max_rows: 500 \(supabase\/config\.toml \[api\] max_rows\) is below the 1000 rows a call/,
			fix: /fix: supabaseAdapter\(supabase, \{ maxRows: 500 \}\) in the app, or raise max_rows to 1000/,
			breakIt: async () => {
				const path = join(project, 'supabase/config.toml');
				const before = await readFile(path, 'utf8');
				await writeFile(path, `${before}\n[api]\nmax_rows = 500\n`);
				return () => writeFile(path, before);
			},
		},
		{
			what: 'the app signing in anonymously with anonymous sign-ins off',
			fails: 'anonymous sign-ins',
			says: /anonymous sign-ins: the app calls signInAnonymously\(\) \(src\/hooks\.server\.ts\) but supabase\/config\.toml does not enable it/,
			fix: /fix: enable_anonymous_sign_ins = true under \[auth\] in supabase\/config\.toml/,
			breakIt: async () => {
				await mkdir(join(project, 'src'), { recursive: true });
				await writeFile(join(project, 'src/hooks.server.ts'), 'await supabase.auth.signInAnonymously();\n');
				return () => rm(join(project, 'src'), { recursive: true, force: true });
			},
		},
	];

	it('with realtime.messages partitioned and today’s partition made, the partition check passes naming it', async () => {
		const today = new Date().toISOString().slice(0, 10);
		const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
		await sql.unsafe(`alter table realtime.messages rename to messages_switched_off;
		  create table realtime.messages (topic text not null, extension text not null, payload jsonb, event text,
		    private boolean default false, updated_at timestamp not null default now(), inserted_at timestamp not null default now(),
		    id uuid not null default gen_random_uuid(), primary key (id, inserted_at)) partition by range (inserted_at);
		  create table realtime.messages_today partition of realtime.messages for values from ('${today}') to ('${tomorrow}');`);
		try {
			const run = await doctor(withDb());
			expect(run.stdout).toMatch(
				/✓ realtime\.messages partitions: today's is messages_today \(0 of the next 3 days made too\)/,
			);
		} finally {
			await sql.unsafe(`drop table realtime.messages; alter table realtime.messages_switched_off rename to messages`);
		}
	});

	it('with the app signing in anonymously and [auth] enable_anonymous_sign_ins = true, that check passes', async () => {
		const path = join(project, 'supabase/config.toml');
		const before = await readFile(path, 'utf8');
		await mkdir(join(project, 'src'), { recursive: true });
		await writeFile(join(project, 'src/hooks.server.ts'), 'await supabase.auth.signInAnonymously();\n');
		await writeFile(path, `${before}\n[auth]\nenable_anonymous_sign_ins = true\n`);
		try {
			const run = await doctor(withDb());
			expect(run.marks.get('anonymous sign-ins')).toBe('✓');
			expect(run.stdout).toContain(
				'anonymous sign-ins: enabled in supabase/config.toml; the app calls signInAnonymously() (src/hooks.server.ts)',
			);
		} finally {
			await writeFile(path, before);
			await rm(join(project, 'src'), { recursive: true, force: true });
		}
	});

	for (const b of broken)
		it(`with ${b.what}, only "${b.fails}" fails, with its fix, and the exit code is 1`, async () => {
			const restore = await b.breakIt();
			let run: DoctorRun;
			try {
				run = await doctor([...withDb(), ...((await b.args?.()) ?? [])]);
			} finally {
				await restore();
			}
			if (process.env.DEBUG_DOCTOR) console.log(`[doctor output, ${b.what}]\n${run.stdout}`);
			expect(run.code, run.stdout).toBe(1);
			expect([...run.marks.keys()]).toEqual([...LABELS]);
			for (const label of LABELS) {
				const expected = label === b.fails ? '✗' : b.notChecked?.includes(label) ? '–' : '✓';
				expect(`${label}: ${run.marks.get(label)}`, run.stdout).toBe(`${label}: ${expected}`);
			}
			expect(run.stdout).toMatch(b.says);
			expect(run.stdout).toMatch(b.fix);
			expect(run.stdout.match(/fix:/g)).toHaveLength(1);
			expect(run.stdout).not.toContain(WORKER_SECRET);
		});

	it('without a database to check it says how to name one and exits 2', async () => {
		const run = await doctor();
		expect(run.code).toBe(2);
		expect(run.stdout).toContain('--db-url');
		expect(run.marks.size).toBe(0);
	});
});
