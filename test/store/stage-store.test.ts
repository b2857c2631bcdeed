/**
 * 9. Several stages on the record itself — StageMap with its fenced SQL writes
 * (StageStore), through the postgres.js adapter as a user.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { InvalidJobInputError, isJobError } from '../../src/lib/errors.ts';
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
	await db.sql.unsafe(
		`create table public.documents (id uuid primary key default gen_random_uuid(), owner_id uuid not null, ${columns})`,
	);
	await db.sql`alter table public.documents enable row level security`;
	await db.sql`create policy own on public.documents for all to authenticated using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()))`;
	await db.sql`grant select, insert, update on public.documents to authenticated`;
	owner = await createUser(db.sql);
	const stranger = await createUser(db.sql);
	stages = new StageStore(postgresAdapter(db.sql, { claims: claimsFor(owner as never) }), STAGES, {
		table: 'documents',
	});
	strangers = new StageStore(postgresAdapter(db.sql, { claims: claimsFor(stranger) }), STAGES, { table: 'documents' });
});

async function doc(): Promise<string> {
	const [row] = await db.sql`insert into documents (owner_id) values (${owner.sub}) returning id`;
	return row!.id;
}
const read = async (id: string) => (await db.sql`select * from documents where id = ${id}`)[0]!;

describe('StageMap writes the stage columns once — with writes the database fences', () => {
	it('the map resolves doc_status_summary, doc_error_summary and doc_result_summary', () => {
		expect(STAGES.columns('summary')).toMatchObject({
			status: 'doc_status_summary',
			error: 'doc_error_summary',
			result: 'doc_result_summary',
		});
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
		expect(
			await stages.finish(id, 'summary', running, { status: 'done', result: 'late' }),
			'cancelled work is not resurrected',
		).toBe(false);
	});

	it('marking without a result does not erase the previous one', async () => {
		const id = await doc();
		const first = await stages.start(id, 'summary');
		await stages.finish(id, 'summary', first, { status: 'done', result: 'the old summary' });
		const regen = await stages.start(id, 'summary');
		await stages.finish(id, 'summary', regen, {
			status: 'failed',
			error: 'The model is unavailable; try again later.',
		});
		expect(await read(id)).toMatchObject({
			doc_status_summary: 'failed',
			doc_result_summary: 'the old summary',
			doc_error_summary: 'The model is unavailable; try again later.',
		});
	});

	it("another user's record is not found (RLS), and nothing changes", async () => {
		const id = await doc();
		const err = await strangers.start(id, 'summary').catch((e: unknown) => e);
		expect(isJobError(err, 'job_not_found')).toBe(true);
		expect((await read(id)).doc_status_summary).toBeNull();
	});

	it('the map refuses at construction when two stages would resolve to the same column', () => {
		expect(
			() =>
				new StageMap(['summary', 'summary_'], {
					templates: { status: 'doc_status', error: 'e_{stage}', result: 'r_{stage}', token: 't_{stage}' },
				}),
		).toThrow(/same column|doc_status/);
	});
});

describe('StageStore, hardened', () => {
	/** A record table of the owner's with the given column definitions; RLS as above. */
	async function recordTable(name: string, columns: string): Promise<void> {
		await db.sql.unsafe(
			`create table public.${name} (id uuid primary key default gen_random_uuid(), owner_id uuid not null, ${columns})`,
		);
		await db.sql.unsafe(`alter table public.${name} enable row level security`);
		await db.sql.unsafe(
			`create policy own on public.${name} for all to authenticated using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()))`,
		);
		await db.sql.unsafe(`grant select, insert, update on public.${name} to authenticated`);
	}
	const asOwner = () => postgresAdapter(db.sql, { claims: claimsFor(owner as never) });
	const row = async (table: string) =>
		(await db.sql.unsafe(`insert into public.${table} (owner_id) values ($1) returning id`, [owner.sub]))[0]!
			.id as string;
	const readFrom = async (table: string, id: string) =>
		(await db.sql.unsafe(`select * from public.${table} where id = $1`, [id]))[0]!;

	it('the three-column layout works: status, error and result, no run-token column', async () => {
		await recordTable(
			'three_column_documents',
			'doc_status_summary text, doc_error_summary text, doc_result_summary text',
		);
		const threeColumns = new StageStore(asOwner(), new StageMap(['summary'], { prefix: 'doc_' }), {
			table: 'three_column_documents',
		});
		const id = await row('three_column_documents');
		const token = await threeColumns.start(id, 'summary');
		expect(await threeColumns.finish(id, 'summary', token, { status: 'done', result: 'a summary' })).toBe(true);
		expect(await readFrom('three_column_documents', id)).toMatchObject({
			doc_status_summary: 'done',
			doc_result_summary: 'a summary',
		});
		// Without a token, fencing is a compare-and-set on 'running': a cancelled stage stays cancelled.
		const again = await threeColumns.start(id, 'summary');
		expect(await threeColumns.cancel(id)).toEqual({ cancelled: ['summary'], ignored: [] });
		expect(await threeColumns.finish(id, 'summary', again, { status: 'done', result: 'late' })).toBe(false);
		expect(await readFrom('three_column_documents', id)).toMatchObject({
			doc_status_summary: 'cancelled',
			doc_result_summary: 'a summary',
		});
	});

	it('a token column named explicitly must exist: refused naming token_column, nothing written', async () => {
		const declared = new StageMap(['summary'], { prefix: 'doc_', templates: { token: '{prefix}token_{stage}' } });
		const strict = new StageStore(asOwner(), declared, { table: 'three_column_documents' });
		const id = await row('three_column_documents');
		const e = await strict.start(id, 'summary').catch((err: unknown) => err);
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect((e as InvalidJobInputError).field).toBe('token_column');
		expect((await readFrom('three_column_documents', id)).doc_status_summary).toBeNull();
	});

	it('cancel refuses a stage named twice before any SQL, naming it; the SQL refuses it too (22023), not 42601', async () => {
		const id = await doc();
		await stages.start(id, 'summary');
		const e = await stages.cancel(id, ['summary', 'summary']).catch((err: unknown) => err);
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect((e as InvalidJobInputError).message).toBe('stage "summary" is listed twice');
		expect((e as InvalidJobInputError).field).toBe('stages');
		const direct = await asOwner()
			.call('stage_cancel', {
				record_table: 'documents',
				record_id: id,
				stages: [
					{ stage: 'summary', status: 'doc_status_summary' },
					{ stage: 'summary', status: 'doc_status_summary' },
				] as unknown as { readonly [key: string]: unknown },
			})
			.catch((err: unknown) => err);
		expect(direct).toBeInstanceOf(InvalidJobInputError);
		expect((direct as InvalidJobInputError).field).toBe('stages');
		expect((await read(id)).doc_status_summary).toBe('running');
	});

	it('finish with result: null clears the result, as mark does; omitting it keeps the previous one', async () => {
		const id = await doc();
		const first = await stages.start(id, 'summary');
		await stages.finish(id, 'summary', first, { status: 'done', result: 'the old summary' });
		const kept = await stages.start(id, 'summary');
		await stages.finish(id, 'summary', kept, { status: 'done' });
		expect((await read(id)).doc_result_summary).toBe('the old summary');
		const cleared = await stages.start(id, 'summary');
		await stages.finish(id, 'summary', cleared, { status: 'done', result: null });
		expect((await read(id)).doc_result_summary).toBeNull();

		// The in-memory map agrees on both.
		const record = { doc_result_summary: 'the old summary' };
		STAGES.mark(record, 'summary', 'done');
		expect(record.doc_result_summary).toBe('the old summary');
		STAGES.mark(record, 'summary', 'done', { result: null });
		expect(record.doc_result_summary).toBeNull();
	});

	it('cancel with 60 stages runs in one statement, without hitting the 100-argument limit (54023)', async () => {
		const many = new StageMap(
			Array.from({ length: 60 }, (_, i) => `s${i}`),
			{ prefix: 'm_' },
		);
		await recordTable(
			'many_stages',
			many.stages
				.map((s) => {
					const c = many.columns(s);
					return `${c.status} text, ${c.error} text, ${c.result} text, ${c.token} uuid`;
				})
				.join(', '),
		);
		const manyStages = new StageStore(asOwner(), many, { table: 'many_stages' });
		const id = await row('many_stages');
		for (const s of ['s0', 's30', 's59']) await manyStages.start(id, s);
		const outcome = await manyStages.cancel(id);
		expect(outcome.cancelled).toEqual(['s0', 's30', 's59']);
		expect(outcome.ignored).toHaveLength(57);
		expect(await readFrom('many_stages', id)).toMatchObject({
			m_status_s0: 'cancelled',
			m_status_s30: 'cancelled',
			m_status_s59: 'cancelled',
			m_status_s1: null,
		});
	});
});
