/**
 * Properties of a job's metadata over both adapters (tick with `metadata`,
 * read back with get) and of public.job_tick called directly: an update is
 * refused with a typed error naming metadata and the job's metadata is
 * unchanged, or it reads back as what it held merged key by key with the update.
 */
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/lib/store/job-store.ts';
import { checkProperty, fc } from '../helpers/property.ts';
import {
	as,
	expectSqlRefusal,
	expectTypedRefusal,
	hostileString,
	jsonObject,
	openSurfaces,
	refusedOrStored,
	serviceRole,
	sqlJsonObject,
	wrongType,
	jsonRoundTrip,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();
const KIND = 'property.metadata';

async function runningJob(store: JobStore): Promise<{ id: string; attempt: number }> {
	const job = await store.enqueue(KIND);
	const claimed = await store.claim(job.id);
	return { id: job.id, attempt: claimed!.attempts };
}

const metadataOf = async (id: string) =>
	(await f.db.sql`select metadata from supabase_jobs.job where id = ${id}`)[0]!.metadata as unknown;

/** An update: an object (nested, hostile keys and strings, sometimes large), or no object at all. */
const update = fc.oneof(
	{ weight: 5, arbitrary: jsonObject },
	fc.dictionary(fc.constantFrom('pages', 'note', 'big'), hostileString, { maxKeys: 2 }),
	wrongType,
);
const updates = fc.array(update, { minLength: 1, maxLength: 3 });

describe.each(stores)('metadata over $name', ({ store }) => {
	it('tick refuses metadata naming it, or the job reads back with it merged key by key', async () => {
		const seen = new Set<string>();
		await checkProperty(updates, async (list) => {
			const job = await runningJob(store);
			let model: Record<string, unknown> | null = null;
			for (const metadata of list) {
				seen.add(
					await refusedOrStored({
						call: () => store.tick(job.id, { metadata: metadata as Record<string, unknown>, attempt: job.attempt }),
						snapshot: () => metadataOf(job.id),
						refusal: (e) => expectTypedRefusal(e, ['metadata']),
						stored: async () => {
							model = { ...(model ?? {}), ...(jsonRoundTrip(metadata) as Record<string, unknown>) };
							expect((await store.get(job.id)).metadata).toEqual(model);
						},
					}),
				);
			}
		});
		expectBothOutcomes(seen);
	});
});

describe('public.job_tick called directly', () => {
	it('refuses metadata with 22023 naming it, or the job reads back with it merged key by key', async () => {
		const seen = new Set<string>();
		const sqlUpdate = fc.oneof(
			{ weight: 5, arbitrary: sqlJsonObject },
			fc.dictionary(fc.constantFrom('pages', 'big'), fc.constantFrom('a'.repeat(70_000), '😀', ''), { maxKeys: 2 }),
			wrongType,
		);
		const worker = stores[0]!.store;
		await checkProperty(fc.array(sqlUpdate, { minLength: 1, maxLength: 3 }), async (list) => {
			const job = await runningJob(worker);
			let model: Record<string, unknown> | null = null;
			for (const metadata of list) {
				const text = JSON.stringify(metadata);
				seen.add(
					await refusedOrStored({
						call: () =>
							as(
								f.db.sql,
								serviceRole,
								(tx) =>
									tx`select public.job_tick(${job.id}::uuid, attempt => ${job.attempt}::integer, metadata => ${text}::text::jsonb)`,
							),
						snapshot: () => metadataOf(job.id),
						refusal: (e) => expectSqlRefusal(e, ['metadata']),
						stored: async () => {
							if (metadata === null) return; // SQL null: no metadata in this tick
							model = { ...(model ?? {}), ...(JSON.parse(text) as Record<string, unknown>) };
							expect(await metadataOf(job.id)).toEqual(model);
						},
					}),
				);
			}
		});
		expectBothOutcomes(seen);
	});
});
