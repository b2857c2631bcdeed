import { describe, expect, it } from 'vitest';
import { InvalidJobInputError } from '../../src/lib/errors.ts';
import { StageMap } from '../../src/lib/toolkit/stage-map.ts';
import { StageStatus, TERMINAL_STAGE_STATUSES } from '../../src/lib/toolkit/stage-status.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const STAGES = new StageMap(['transcription', 'summary', 'suggestions'], { prefix: 'doc_' });

describe('StageMap: several stages on the record itself', () => {
	it('with prefix doc_ resolves doc_status_summary, doc_error_summary and doc_result_summary', () => {
		expect(STAGES.columns('summary')).toEqual({
			status: 'doc_status_summary',
			error: 'doc_error_summary',
			result: 'doc_result_summary',
			token: 'doc_run_summary',
		});
		expect(STAGES.stages).toEqual(['transcription', 'summary', 'suggestions']);
		expect(STAGES.columnNames()).toHaveLength(12);
	});

	it('the templates are configurable, because column naming is a house convention', () => {
		const map = new StageMap(['summary'], {
			prefix: 'doc_',
			templates: { status: '{stage}_status', error: '{stage}_error' },
		});
		expect(map.columns('summary')).toMatchObject({
			status: 'summary_status',
			error: 'summary_error',
			result: 'doc_result_summary',
		});
	});

	it('refuses at construction when two stages would resolve to the same column, naming both stages and the column', () => {
		// The copy-paste bug: a template that forgot {stage}.
		expect(() => new StageMap(['summary', 'suggestions'], { templates: { result: 'doc_result' } })).toThrow(
			'stages "summary" and "suggestions" both resolve to column "doc_result"',
		);
		// Different stages whose names collide through the template.
		expect(() => new StageMap(['a_b', 'b'], { templates: { status: 'x_{stage}', error: 'x_a_{stage}' } })).toThrow(
			/stages "a_b" and "b" both resolve to column "x_a_b"/,
		);
	});

	it('refuses one stage resolving two of its own columns to the same name', () => {
		expect(() => new StageMap(['summary'], { templates: { error: '{prefix}status_{stage}' } })).toThrow(
			/stage "summary" resolves both its status and its error to column "status_summary"/,
		);
	});

	it('refuses duplicate or empty stage names, no stages, and names PostgreSQL would truncate', () => {
		expect(() => new StageMap(['summary', 'summary'])).toThrow(/listed twice/);
		expect(() => new StageMap([''])).toThrow(TypeError);
		expect(() => new StageMap([])).toThrow(RangeError);
		expect(() => new StageMap(['s'.repeat(60)])).toThrow(/63-byte/);
	});

	it('refuses an unknown stage instead of writing a column nobody reads', () => {
		expect(() => STAGES.columns('sumary')).toThrow(/unknown stage "sumary"/);
		expect(() => STAGES.mark({}, 'sumary', StageStatus.RUNNING)).toThrow(RangeError);
		expect(() => STAGES.cancel({}, ['sumary'])).toThrow(RangeError);
	});

	it('StageStatus is one of running, done, failed, cancelled; null means the stage never ran', () => {
		expect(Object.values(StageStatus)).toEqual(['running', 'done', 'failed', 'cancelled']);
		expect(TERMINAL_STAGE_STATUSES).toEqual(['done', 'failed', 'cancelled']);
		expect(STAGES.status({}, 'summary')).toBeNull();
		expect(STAGES.status({ doc_status_summary: 'weird' }, 'summary')).toBeNull();
	});

	it('mark writes the status on the plain record, and running stores a fresh run token', () => {
		const doc: Record<string, unknown> = { id: 1 };
		STAGES.mark(doc, 'summary', StageStatus.RUNNING);
		expect(doc).toMatchObject({ doc_status_summary: 'running', doc_error_summary: null });
		expect(doc.doc_run_summary).toMatch(UUID);
		expect('doc_result_summary' in doc).toBe(false);
		expect('doc_status_transcription' in doc).toBe(false); // a neighbour's columns are never touched
		const first = doc.doc_run_summary;
		STAGES.mark(doc, 'summary', StageStatus.RUNNING);
		expect(doc.doc_run_summary).not.toBe(first);
	});

	it('startRun returns a fresh token to store when marking running', () => {
		const doc = {};
		const token = STAGES.startRun();
		expect(token).toMatch(UUID);
		expect(STAGES.startRun()).not.toBe(token);
		STAGES.mark(doc, 'summary', StageStatus.RUNNING, { token });
		expect(STAGES.token(doc, 'summary')).toBe(token);
	});

	it('marking without a result does not erase the previous one; an error describes the latest mark', () => {
		const doc: Record<string, unknown> = {};
		STAGES.mark(doc, 'summary', StageStatus.DONE, { result: 'the old summary' });
		STAGES.mark(doc, 'summary', StageStatus.RUNNING);
		STAGES.mark(doc, 'summary', StageStatus.FAILED, { error: 'The model is unavailable.' });
		expect(doc).toMatchObject({
			doc_status_summary: 'failed',
			doc_result_summary: 'the old summary',
			doc_error_summary: 'The model is unavailable.',
		});
		STAGES.mark(doc, 'summary', StageStatus.DONE, { result: 'the new summary' });
		expect(doc).toMatchObject({ doc_result_summary: 'the new summary', doc_error_summary: null });
		STAGES.mark(doc, 'summary', StageStatus.DONE, { result: null });
		expect(doc.doc_result_summary).toBeNull();
	});

	it('mark refuses a status that is not a StageStatus', () => {
		expect(() => STAGES.mark({}, 'summary', 'finished' as never)).toThrow(/unknown stage status/);
	});

	it('owns is an ownership check: the user cancelled, or a newer run restarted the stage — either way the old run must not write', () => {
		const doc: Record<string, unknown> = {};
		const mine = STAGES.startRun();
		STAGES.mark(doc, 'summary', StageStatus.RUNNING, { token: mine });
		expect(STAGES.owns(doc, 'summary', StageStatus.RUNNING, { token: mine })).toBe(true);

		// A newer run restarts the stage: both runs read "running", only the token tells them apart.
		const newer = STAGES.startRun();
		STAGES.mark(doc, 'summary', StageStatus.RUNNING, { token: newer });
		expect(STAGES.owns(doc, 'summary', StageStatus.RUNNING)).toBe(true);
		expect(STAGES.owns(doc, 'summary', StageStatus.RUNNING, { token: mine })).toBe(false);

		// The user cancels.
		STAGES.cancel(doc, ['summary']);
		expect(STAGES.owns(doc, 'summary', StageStatus.RUNNING, { token: newer })).toBe(false);
		expect(STAGES.owns(doc, 'summary', StageStatus.CANCELLED)).toBe(true);
	});

	it('cancelling is deliberately partial: a finished stage lands in ignored rather than raising', () => {
		const doc: Record<string, unknown> = {};
		STAGES.mark(doc, 'transcription', StageStatus.DONE, { result: 'text' });
		STAGES.mark(doc, 'summary', StageStatus.RUNNING);
		// suggestions never ran
		expect(STAGES.cancel(doc)).toEqual({ cancelled: ['summary'], ignored: ['transcription', 'suggestions'] });
		expect(doc).toMatchObject({
			doc_status_transcription: 'done',
			doc_status_summary: 'cancelled',
			doc_result_transcription: 'text',
		});
		expect('doc_status_suggestions' in doc).toBe(false);
		// Asking again (the screen polled twice) is not an error either.
		expect(STAGES.cancel(doc)).toEqual({ cancelled: [], ignored: ['transcription', 'summary', 'suggestions'] });
	});

	it('cancel refuses a stage named twice, naming it, and changes nothing: it cannot be both cancelled and ignored', () => {
		const doc: Record<string, unknown> = {};
		STAGES.mark(doc, 'summary', StageStatus.RUNNING);
		const before = { ...doc };
		let error: unknown;
		try {
			STAGES.cancel(doc, ['summary', 'suggestions', 'summary']);
		} catch (e) {
			error = e;
		}
		expect(error).toBeInstanceOf(InvalidJobInputError);
		expect(error).toMatchObject({ field: 'stages', message: 'stage "summary" is listed twice' });
		expect(doc).toEqual(before);
	});

	it('cancelling a regeneration keeps the old summary, and can say why', () => {
		const doc: Record<string, unknown> = {};
		STAGES.mark(doc, 'summary', StageStatus.DONE, { result: 'the old summary' });
		STAGES.mark(doc, 'summary', StageStatus.RUNNING);
		expect(STAGES.cancel(doc, ['summary'], { reason: 'Cancelled by you.' })).toEqual({
			cancelled: ['summary'],
			ignored: [],
		});
		expect(doc).toMatchObject({
			doc_status_summary: 'cancelled',
			doc_result_summary: 'the old summary',
			doc_error_summary: 'Cancelled by you.',
		});
	});

	it('works on class instances too, not only object literals', () => {
		class Document {
			doc_status_summary: string | null = null;
		}
		const doc = new Document();
		STAGES.mark(doc, 'summary', StageStatus.RUNNING);
		expect(doc.doc_status_summary).toBe('running');
	});
});
