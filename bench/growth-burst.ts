/**
 * Plans that survive growth: a burst of enqueue + claimNext + succeed loops
 * for BURST_SECONDS from an empty, freshly analysed job table, then the same
 * burst on the table that burst left behind (analysed: warm). Every burst
 * opens new connections, so each session plans the job_* functions afresh:
 * the empty burst's plans are made while the table holds nothing, and must
 * not turn into sequential scans of what it holds seconds later.
 */
import postgres from 'postgres';
import { JobStore, postgresAdapter } from '../src/lib/index.ts';
import { now } from './stats.ts';

/** One burst: `concurrency` loops on new connections for `seconds`; returns jobs/s. */
async function burst(url: string, seconds: number, concurrency: number): Promise<number> {
	const sql = postgres(url, { max: concurrency, onnotice: () => {} });
	const store = new JobStore(postgresAdapter(sql));
	let done = 0;
	try {
		const started = now();
		await Promise.all(
			Array.from({ length: concurrency }, async () => {
				while (now() - started < seconds * 1000) {
					await store.enqueue('burst');
					const [job] = await store.claimNext({ kinds: ['burst'] });
					if (job) {
						await store.succeed(job.id, { attempt: job.attempts });
						done++;
					}
				}
			}),
		);
		return (done * 1000) / (now() - started);
	} finally {
		await sql.end();
	}
}

/** The empty burst and the warm one, in that order, on the job table of `url` (emptied first). */
export async function growthBurst(
	url: string,
	seconds: number,
	concurrency: number,
): Promise<{ empty: number; warm: number; rowsAfter: number }> {
	const admin = postgres(url, { max: 1, onnotice: () => {} });
	try {
		await admin`delete from public.jobs`;
		await admin`delete from realtime.messages`;
		await admin`vacuum analyze public.jobs`;
		const empty = await burst(url, seconds, concurrency);
		await admin`delete from realtime.messages`;
		await admin`vacuum analyze public.jobs`;
		const warm = await burst(url, seconds, concurrency);
		const [{ n }] = await admin<{ n: number }[]>`select count(*)::int as n from public.jobs`;
		await admin`delete from public.jobs`;
		return { empty, warm, rowsAfter: n };
	} finally {
		await admin.end();
	}
}
