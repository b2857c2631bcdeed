/**
 * The demo console: the app keeps its port across restarts unless another
 * program holds it, and then it says so.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { duration, portOrFree } from '../../src/local/demo/stack.ts';
import { freePort } from '../../src/local/postgres/embedded.ts';

let held: Server | null = null;
afterEach(async () => {
	await new Promise<void>((resolve) => (held ? held.close(() => resolve()) : resolve()));
	held = null;
});

describe('the demo console', () => {
	it('keeps the preferred port when it is free, and says nothing', async () => {
		const port = await freePort();
		const said: string[] = [];
		expect(await portOrFree(port, 'the app', (m) => said.push(m))).toBe(port);
		expect(said).toEqual([]);
	});

	it('takes another port when the preferred one is held by another program, and says which', async () => {
		const port = await freePort();
		held = createServer();
		await new Promise<void>((resolve) => held!.listen(port, '127.0.0.1', resolve));
		const said: string[] = [];
		const used = await portOrFree(port, 'the app', (m) => said.push(m));
		expect(used).not.toBe(port);
		expect(said).toEqual([`port ${port} is taken (another program?): the app uses ${used} this time`]);
	});

	it('prints times as people read them', () => {
		expect(duration(40.4)).toBe('40 ms');
		expect(duration(3140)).toBe('3.1 s');
	});
});
