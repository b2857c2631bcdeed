/**
 * Whether a job failed for good: failed with an error code its kind declares
 * permanent (`defineJobKind({ permanentErrors })`), or its row says so
 * (`failedForGood`, recorded by the worker), where trying again would fail the
 * same way.
 *
 * @internal
 */
import { NotRetryableError } from '../../errors.ts';

/**
 * @internal
 * @example
 * failedForGood({ status: 'failed', errorCode: 'empty_file' }, ['empty_file']); // true
 */
export function failedForGood(
	job: { status: string | null; errorCode: string | null; failedForGood?: boolean } | null,
	permanentErrors: readonly string[] | undefined,
): boolean {
	if (job?.status !== 'failed') return false;
	return job.failedForGood === true || (job.errorCode !== null && (permanentErrors ?? []).includes(job.errorCode));
}

/**
 * The refusal of trying again a job that failed for good (before asking the database).
 *
 * @internal
 */
export function failedForGoodError(id: string, errorCode: string | null): NotRetryableError {
	return new NotRetryableError(`job ${id} failed for good (${errorCode}): trying again would fail the same way`);
}
