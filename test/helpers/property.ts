/**
 * Property-based tests: one seed per run, printed, so a failure can be run again.
 * `FC_SEED=<n>` replays a run; `FC_RUNS=<n>` sets how many cases each property
 * tries (default 40: each case is a round trip to PostgreSQL). fast-check shrinks
 * a failing case and its report (thrown by `checkProperty`) prints the shrunk
 * counterexample with the seed and path to replay it; `FC_SEED=<n> FC_PATH=<p>`
 * runs that one case again.
 */
import fc from 'fast-check';

const fromEnv = Number(process.env.FC_SEED);
/** This run's seed: FC_SEED when given, otherwise drawn once per test file. */
export const propertySeed = Number.isSafeInteger(fromEnv) ? fromEnv : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const runs = Number(process.env.FC_RUNS ?? 40);

let printed = false;
function printSeed() {
	if (printed) return;
	printed = true;
	console.log(`fast-check seed ${propertySeed} (replay with FC_SEED=${propertySeed})`);
}

/** Runs an async property with this run's seed; throws fast-check's report (with the shrunk case) on failure. */
export async function checkProperty<T>(
	arbitrary: fc.Arbitrary<T>,
	predicate: (value: T) => Promise<void>,
	options: { numRuns?: number } = {},
): Promise<void> {
	printSeed();
	const path = process.env.FC_PATH;
	const details = await fc.check(
		fc.asyncProperty(arbitrary, async (value) => {
			await predicate(value);
		}),
		{
			seed: propertySeed,
			numRuns: options.numRuns ?? runs,
			endOnFailure: false,
			verbose: 1,
			...(path ? { path } : {}),
		},
	);
	if (!details.failed) return;
	const replay = `replay with FC_SEED=${details.seed} FC_PATH=${details.counterexamplePath ?? ''}`;
	const report = fc.defaultReportMessage(details) ?? 'property failed';
	throw new Error(`${report}\n${replay}`, { cause: details.errorInstance });
}

export { fc };
