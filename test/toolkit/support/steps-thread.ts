/** Starts the steps fixture in a real worker_thread (TypeScript via tsx) and follows its messages. */
import { Worker } from 'node:worker_threads';
import type { StepsThreadData, StepsThreadMessage } from '../fixtures/steps-thread.ts';

export interface StepsThread {
	/** Resolves when the thread is parked mid-work. */
	parked: Promise<void>;
	/** The thread's last word: its result, or where it stopped. */
	final: Promise<Extract<StepsThreadMessage, { type: 'result' | 'stopped' }>>;
	/** Lets a parked thread continue. */
	openGate(): void;
	exited: Promise<number>;
}

export function startStepsThread(options: {
	steps: number;
	parkAt: number;
	stop: SharedArrayBuffer | null;
}): StepsThread {
	const gate = new SharedArrayBuffer(4);
	const data: StepsThreadData = { ...options, gate };
	// Node 20 cannot run TypeScript in a worker by itself: a one-line bootstrap loads the fixture through tsx.
	const fixture = new URL('../fixtures/steps-thread.ts', import.meta.url).href;
	const bootstrap = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(fixture)}, ${JSON.stringify(import.meta.url)}))`;
	const thread = new Worker(bootstrap, { eval: true, workerData: data });
	let onParked!: () => void;
	const parked = new Promise<void>((r) => (onParked = r));
	const final = new Promise<Extract<StepsThreadMessage, { type: 'result' | 'stopped' }>>((resolve, reject) => {
		thread.on('message', (m: StepsThreadMessage) => (m.type === 'parked' ? onParked() : resolve(m)));
		thread.once('error', reject);
	});
	const exited = new Promise<number>((r) => thread.once('exit', r));
	return {
		parked,
		final,
		exited,
		openGate: () => {
			const cell = new Int32Array(gate);
			Atomics.store(cell, 0, 1);
			Atomics.notify(cell, 0);
		},
	};
}
