/**
 * The claim-and-complete loops two systems are driven with (ours as raw
 * claimNext + succeed, pg-boss as fetch + complete): one copy, so both get the
 * same fairness rules.
 */
import { clockStart, now, sleep } from './stats.ts';

/**
 * Runs `concurrency` loops that take one job and complete it until `n` jobs
 * are done. Each loop reserves its slot before taking, so the loops never take
 * more than `n` even with other jobs queued; an empty take while others hold the
 * last rows is not the end. Gives up after 60 s. Returns the elapsed ms.
 */
export async function drainLoops<J>(
	label: string,
	n: number,
	concurrency: number,
	take: () => Promise<J | undefined>,
	complete: (job: J) => Promise<unknown>,
): Promise<number> {
	const started = await clockStart();
	let claimed = 0;
	let done = 0;
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (claimed < n) {
				claimed++;
				const job = await take();
				if (job === undefined) {
					claimed--;
					if (now() - started > 60_000) throw new Error(`${label}: ${claimed} of ${n} jobs taken after 60 s`);
					await sleep(1);
					continue;
				}
				await complete(job);
				done++;
			}
		}),
	);
	if (done !== n) throw new Error(`${label}: loops finished ${done} of ${n} jobs`);
	return now() - started;
}

/**
 * {@link drainLoops} over jobs known by id (the per-job path): each loop claims
 * the next id, which must be claimable, and completes it.
 */
export async function drainByIds<J>(
	label: string,
	ids: readonly string[],
	concurrency: number,
	claim: (id: string) => Promise<J | null | undefined>,
	complete: (job: J) => Promise<unknown>,
): Promise<number> {
	let next = 0;
	return await drainLoops(
		label,
		ids.length,
		concurrency,
		async () => {
			const id = ids[next++]!;
			const job = await claim(id);
			if (!job) throw new Error(`${label}: job ${id} was not claimable`);
			return job;
		},
		complete,
	);
}
