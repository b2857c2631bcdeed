/**
 * Table reads (`supabase.from(t).select(...)`) against the stand-in, checked
 * against PostgREST's behaviour: Query/Statements.hs `mainRead`, RangeQuery.hs
 * (Content-Range, 206/416), Error.hs (PGRST205, PGRST116).
 */
import { describe, expect, it } from 'vitest';
import { client, useStandin, userClient } from './helpers.ts';

const f = await useStandin(`
  create table public.tasks (
    id int primary key, owner_id uuid, status text not null, kind text, progress real, created_at timestamptz not null, note text
  );
  alter table public.tasks enable row level security;
  create policy tasks_owner on public.tasks for select to authenticated using (owner_id = (select auth.uid()));
  create policy tasks_public on public.tasks for select to anon using (kind = 'public');
  grant select on public.tasks to anon, authenticated, service_role;
  insert into public.tasks (id, status, kind, progress, created_at, note)
  select i, (array['queued','running','done'])[1 + i % 3], case when i <= 2 then 'public' else 'private' end, i * 10,
         timestamptz '2026-01-01 00:00:00.123456+00' + i * interval '1 minute', case when i % 2 = 0 then null else 'odd' end
  from generate_series(1, 9) i;
`);

const service = () => client(f, undefined, f.standin.serviceRoleKey);

describe('table reads', () => {
	it('selects columns with eq, order and range, and counts exactly', async () => {
		const { data, count, status, error } = await service()
			.from('tasks')
			.select('id,status', { count: 'exact' })
			.eq('status', 'done')
			.order('id', { ascending: false })
			.range(0, 1);
		expect(error).toBeNull();
		expect(status).toBe(206);
		expect(count).toBe(3);
		expect(data).toEqual([
			{ id: 8, status: 'done' },
			{ id: 5, status: 'done' },
		]);
	});

	it('answers 200 and a full Content-Range when the page holds every row', async () => {
		const res = await fetch(`${f.standin.url}/rest/v1/tasks?select=id&status=eq.queued`, {
			headers: {
				apikey: f.standin.serviceRoleKey,
				Authorization: `Bearer ${f.standin.serviceRoleKey}`,
				Prefer: 'count=exact',
			},
		});
		expect(res.status).toBe(200);
		expect(res.headers.get('content-range')).toBe('0-2/3');
		expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
	});

	it('filters with neq, lt, lte, gt, gte, in and is', async () => {
		const ids = async (q: (b: any) => any) =>
			((await q(service().from('tasks').select('id').order('id'))).data as { id: number }[]).map((r) => r.id);
		expect(await ids((b) => b.neq('status', 'done'))).toEqual([1, 3, 4, 6, 7, 9]);
		expect(await ids((b) => b.lt('progress', 30))).toEqual([1, 2]);
		expect(await ids((b) => b.lte('progress', 30))).toEqual([1, 2, 3]);
		expect(await ids((b) => b.gt('created_at', '2026-01-01T00:08:00.123456Z'))).toEqual([9]);
		expect(await ids((b) => b.gte('created_at', '2026-01-01T00:08:00.123456Z'))).toEqual([8, 9]);
		expect(await ids((b) => b.in('status', ['queued', 'running']).lte('id', 4))).toEqual([1, 3, 4]);
		expect(await ids((b) => b.is('note', null).lte('id', 4))).toEqual([2, 4]);
		expect(await ids((b) => b.not('note', 'is', null).lte('id', 4))).toEqual([1, 3]);
	});

	it('orders descending with limit and offset from range()', async () => {
		const { data } = await service().from('tasks').select('id').order('created_at', { ascending: false }).range(2, 4);
		expect(data).toEqual([{ id: 7 }, { id: 6 }, { id: 5 }]);
	});

	it('applies RLS: anon sees public rows, a user only their own', async () => {
		const anon = await client(f).from('tasks').select('id').order('id');
		expect(anon.data).toEqual([{ id: 1 }, { id: 2 }]);
		const user = await userClient(f);
		await f.db.sql`update public.tasks set owner_id = ${user.id} where id in (5, 7)`;
		const mine = await user.supabase.from('tasks').select('id').order('id');
		expect(mine.data).toEqual([{ id: 5 }, { id: 7 }]);
	});

	it('returns one object for single() and 406 PGRST116 otherwise', async () => {
		const one = await service().from('tasks').select('id,status').eq('id', 3).single();
		expect(one.data).toEqual({ id: 3, status: 'queued' });
		const many = await service().from('tasks').select('id').single();
		expect(many.status).toBe(406);
		expect(many.error).toEqual({
			code: 'PGRST116',
			message: 'Cannot coerce the result to a single JSON object',
			details: 'The result contains 9 rows',
			hint: null,
		});
	});

	it('answers 404 PGRST205 for an unknown table', async () => {
		const { error, status } = await service().from('taskz').select('id');
		expect(status).toBe(404);
		expect(error).toEqual({
			code: 'PGRST205',
			message: "Could not find the table 'public.taskz' in the schema cache",
			details: null,
			hint: "Perhaps you meant the table 'public.tasks'",
		});
	});

	it('lets PostgreSQL refuse an unknown column (400 42703)', async () => {
		const { error, status } = await service().from('tasks').select('nope');
		expect(status).toBe(400);
		expect(error?.code).toBe('42703');
	});

	it('answers 416 PGRST103 for an offset past the counted rows', async () => {
		const { error, status } = await service().from('tasks').select('id', { count: 'exact' }).range(20, 25);
		expect(status).toBe(416);
		expect(error).toEqual({
			code: 'PGRST103',
			details: 'An offset of 20 was requested, but there are only 9 rows.',
			hint: null,
			message: 'Requested range not satisfiable',
		});
	});
});
