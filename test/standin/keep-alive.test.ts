/**
 * The stand-in keeps idle connections as long as Supabase's gateway does (60 s),
 * not Node's 5 s: supabase-js reusing a socket while it uploads a large body
 * must not have it closed under it (found by test/chaos/bad-input.test.ts: an
 * 11 MB enqueue failed with ECONNRESET, "fetch failed").
 */
import { describe, expect, it } from 'vitest';
import { useStandin } from './helpers.ts';

const f = await useStandin();

describe('stand-in keep-alive', () => {
	it('announces and keeps a 60 s keep-alive, as the gateway does', async () => {
		const res = await fetch(`${f.standin.url}/rest/v1/rpc/job_get`, {
			method: 'POST',
			headers: { apikey: f.standin.anonKey, 'content-type': 'application/json' },
			body: JSON.stringify({ id: 'not-a-uuid' }),
		});
		await res.text();
		expect(res.headers.get('keep-alive')).toBe('timeout=60');
	});
});
