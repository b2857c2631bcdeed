/**
 * 9. Several stages on the record itself — StageMap with its fenced SQL writes
 * (StageStore), through the postgres.js adapter as a user.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { isJobNotFoundError } from '../../src/lib/errors.ts';
import { StageStore } from '../../src/lib/store/stage-store.ts';
import { StageMap } from '../../src/lib/toolkit/stage-map.ts';
import { claimsFor, createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let owner: { sub: string };
let stages: StageStore;
let strangers: StageStore;
const STAGES = new StageMap(['transcription', 'summary', 'suggestions'], { prefix: 'doc_' });

beforeAll(async () => {
	db = await useTestDatabase();
	const columns = STAGES.stages
		.map((s) => {
			const c = STAGES.columns(s);
			return `${c.status} text, ${c.error} text, ${c.result} text, ${c.token} uuid`;
		})
		.join(', ');
	await db.sql.unsafe(`create table public.documents (id uuid primary key default gen_random_uuid(), owner_id uuid not null, ${columns})`);
	await db.sql`alter table public.documents enable row level security`;
	await db.sql`create policy own on public.documents for all to authenticated using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()))`;
	await db.sql`grant select, insert, update on public.documents to authenticated`;
	owner = await createUser(db.sql);
	const stranger = await createUser(db.sql);
	stages = new StageStore(postgresAdapter(db.sql, { claims: claimsFor(owner as never) }), STAGES, { table: 'documents' });
	strangers = new StageStore(postgresAdapter(db.sql, { claims: claimsFor(stranger) }), STAGES, { table: 'documents' });
});

async function doc(): Promise<string> {
	const [row] = await db.sql`insert into documents (owner_id) values (${owner.sub}) returning id`;
	return row!.id;
}
const read = async (id: string) => (await db.sql`select * from documents where id = ${id}`)[0]!;

describe('9. StageMap is that table written once — with writes the database fences', () => {
	it('the map resolves doc_status_summary, doc_error_summary and doc_result_summary', () => {
		expect(STAGES.columns('summary')).toMatchObject({ status: 'doc_status_summary', error: 'doc_error_summary', result: 'doc_result_summary' });
	});

	it('run the stage, writing only if it is still ours', async () => {
		const id = await doc();
		const token = await stages.start(id, 'summary');
		expect(await stages.finish(id, 'summary', token, { status: 'done', result: 'a summary' })).toBe(true);
		expect(await read(id)).toMatchObject({ doc_status_summary: 'done', doc_result_summary: 'a summary' });
	});

	it('owns is an ownership check: a newer run restarted the stage, so the old run must not write', async () => {
		const id = await doc();
		const oldRun = await stages.start(id, 'summary');
		const newRun = await stages.start(id, 'summary');
		expect(await stages.finish(id, 'summary', oldRun, { status: 'done', result: 'stale' })).toBe(false);
		expect(await stages.finish(id, 'summary', newRun, { status: 'done', result: 'fresh' })).toBe(true);
		expect((await read(id)).doc_result_summary).toBe('fresh');
	});

	it('cancelling is deliberately partial: (cancelled, ignored), a finished stage is ignored', async () => {
		const id = await doc();
		const t = await stages.start(id, 'transcription');
		await stages.finish(id, 'transcription', t, { status: 'done', result: 'text' });
		const running = await stages.start(id, 'summary');
		expect(await stages.cancel(id)).toEqual({ cancelled: ['summary'], ignored: ['transcription', 'suggestions'] });
		expect(await stages.finish(id, 'summary', running, { status: 'done', result: 'late' }), 'cancelled work is not resurrected').toBe(false);
	});

	it('marking without a result does not erase the previous one', async () => {
		const id = await doc();
		const first = await stages.start(id, 'summary');
		await stages.finish(id, 'summary', first, { status: 'done', result: 'the old summary' });
		const regen = await stages.start(id, 'summary');
		await stages.finish(id, 'summary', regen, { status: 'failed', error: 'The model is unavailable; try again later.' });
		expect(await read(id)).toMatchObject({ doc_status_summary: 'failed', doc_result_summary: 'the old summary', doc_error_summary: 'The model is unavailable; try again later.' });
	});

	it("another user's record is not found (RLS), and nothing changes", async () => {
		const id = await doc();
		const err = await strangers.start(id, 'summary').catch((e: unknown) => e);
		expect(isJobNotFoundError(err)).toBe(true);
		expect((await read(id)).doc_status_summary).toBeNull();
	});

	it('the map refuses at construction when two stages would resolve to the same column', () => {
		expect(() => new StageMap(['summary', 'summary_'], { templates: { status: 'doc_status', error: 'e_{stage}', result: 'r_{stage}', token: 't_{stage}' } })).toThrow(/same column|doc_status/);
	});
});
