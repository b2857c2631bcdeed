/**
 * What every JobStore conformance suite opens with: the harness its `setup`
 * gives and a worker's store over it, a kind of its own per test, a signed-in
 * user with their store, and the error a call rejected with.
 */
import { randomUUID } from 'node:crypto';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { ConformanceHarness } from './harness.ts';

/** The worker's caller. */
export const SERVICE = { role: 'service_role' } as const;

/** A kind no other test uses, so listings and claimNext stay within the test. */
export const uniqueKind = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

/**
 * What `p` rejected with; throws when it resolved.
 *
 * @example
 * expect(await rejection(store.get(id))).toBeInstanceOf(JobNotFoundError);
 */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
	try {
		await p;
	} catch (e) {
		return e;
	}
	throw new Error('expected the call to reject');
}

/**
 * The suite's harness and a worker's store over it (the service role,
 * readmitting a job after five minutes of silence).
 *
 * @example
 * beforeAll(async () => ({ h, worker } = await openSuite(setup)));
 */
export async function openSuite(
	setup: () => Promise<ConformanceHarness>,
): Promise<{ h: ConformanceHarness; worker: JobStore }> {
	const h = await setup();
	return { h, worker: new JobStore(h.adapter(SERVICE), { staleAfterMs: 300_000 }) };
}

/**
 * A new signed-in user and a store acting as them.
 *
 * @example
 * const alice = await signedIn(h);
 * await alice.store.enqueue('export');
 */
export async function signedIn(h: ConformanceHarness): Promise<{ sub: string; store: JobStore }> {
	const sub = await h.createUser();
	return { sub, store: new JobStore(h.adapter({ role: 'authenticated', sub })) };
}
