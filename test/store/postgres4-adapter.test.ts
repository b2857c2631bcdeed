/**
 * JobStore over postgres.js 4 (the driver `npm i postgres` installs: the
 * registry's latest), through the same conformance suites and adapter tests as
 * version 3. Version 4 sends parameters untyped and lets the server decide:
 * every parameter the adapter sends carries its cast, so both behave alike.
 */
import { readFile } from 'node:fs/promises';
import postgres4 from 'postgres4';
import { afterAll, expect, test } from 'vitest';
import { useTestDatabase, type Sql } from '../helpers/db.ts';
import { describePostgresAdapter } from './postgres-adapter-suite.ts';

const db = await useTestDatabase();
const clients: ReturnType<typeof postgres4>[] = [];
afterAll(async () => {
	await Promise.all(clients.map((c) => c.end({ timeout: 5 })));
});

describePostgresAdapter('postgres.js 4', db, (options) => {
	const client = postgres4(db.url, { onnotice: () => {}, ...options });
	clients.push(client);
	// The adapter's declared type is the installed driver's (3 here); 4's client has the same shape.
	return client as unknown as Sql;
});

test('the driver under test is postgres.js 4: it sends a boolean untyped, so selected back it reads as text', async () => {
	const { version } = JSON.parse(await readFile('node_modules/postgres4/package.json', 'utf8'));
	expect(version).toMatch(/^4\./);
	const client = postgres4(db.url, { onnotice: () => {}, max: 1 });
	clients.push(client);
	const [row] = await client`select ${true} as x`;
	expect(row!.x).toBe('true');
});
