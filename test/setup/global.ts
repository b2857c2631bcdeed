/**
 * Vitest global setup: one PostgreSQL server for the whole run (embedded unless
 * DATABASE_URL is set), and a template database built once from the compat
 * bootstrap, the migrations and the demo's own SQL (src/demo/sql). Each test file clones the template (see
 * test/helpers/db.ts), so files are isolated and can run in parallel.
 */
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { startLocalPostgres } from '../../src/local/postgres/embedded.ts';
import { prepareDatabase, withDatabase } from '../../src/local/postgres/migrate.ts';
import { ensureAppBuilt } from '../../src/local/demo/stack.ts';

declare module 'vitest' {
	export interface ProvidedContext {
		adminUrl: string;
		templateDb: string;
	}
}

export default async function setup(project: TestProject) {
	// The demo app is built here, before any test file runs: built inside the browser
	// tests, it raced the package test's `npm pack` (svelte-kit sync rewrites
	// .svelte-kit/ while vite build reads it) and could ship a client that never hydrates.
	await ensureAppBuilt();
	const server = await startLocalPostgres();
	const templateDb = `sj_template_${process.pid}`;
	const admin = postgres(server.url, { max: 1, onnotice: () => {} });
	try {
		await admin.unsafe(`drop database if exists ${templateDb}`);
		await admin.unsafe(`create database ${templateDb}`);
	} finally {
		await admin.end();
	}
	await prepareDatabase(withDatabase(server.url, templateDb));
	// Tests of everything else have users enqueue kinds they invent on the spot:
	// public.jobs is opened to every kind here, explicitly, with user priorities up
	// to 10 (suites order a user's own jobs by it). The registry's own tests
	// (test/sql/kinds-and-quotas.test.ts) close it again in their database.
	const template = postgres(withDatabase(server.url, templateDb), { max: 1, onnotice: () => {} });
	try {
		await template`select supabase_jobs.register_job_kind('*', user_priority_max => 10)`;
	} finally {
		await template.end();
	}
	project.provide('adminUrl', server.url);
	project.provide('templateDb', templateDb);
	return async () => {
		if (!server.embedded) {
			const sql = postgres(server.url, { max: 1, onnotice: () => {} });
			try {
				const rows = await sql<
					{ datname: string }[]
				>`select datname from pg_database where datname like ${`sj_%_${process.pid}%`}`;
				for (const r of rows) await sql.unsafe(`drop database if exists "${r.datname}" with (force)`);
			} finally {
				await sql.end();
			}
		}
		await server.stop();
	};
}
