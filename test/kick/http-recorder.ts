/**
 * A local node:http server standing in for the worker: records every request
 * and lets a test await the next one (an event, not a sleep).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
	method: string;
	path: string;
	headers: IncomingHttpHeaders;
	body: unknown;
	receivedAt: number;
}

export interface HttpRecorder {
	url: string;
	requests: RecordedRequest[];
	/** Resolves with the request number `index` (0-based), now or when it arrives. */
	nth(index: number, timeoutMs?: number): Promise<RecordedRequest>;
	/** Answer status for the following requests (default 202); 'hang' never answers. */
	respondWith(status: number | 'hang'): void;
	close(): Promise<void>;
}

export async function startHttpRecorder(): Promise<HttpRecorder> {
	const requests: RecordedRequest[] = [];
	const waiters = new Map<number, (r: RecordedRequest) => void>();
	let answer: number | 'hang' = 202;
	const server: Server = createServer((req, res) => {
		const receivedAt = performance.now();
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const text = Buffer.concat(chunks).toString('utf8');
			const recorded: RecordedRequest = {
				method: req.method ?? '',
				path: req.url ?? '',
				headers: req.headers,
				body: text ? JSON.parse(text) : null,
				receivedAt,
			};
			requests.push(recorded);
			waiters.get(requests.length - 1)?.(recorded);
			waiters.delete(requests.length - 1);
			if (answer === 'hang') return;
			res.writeHead(answer, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: true }));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/functions/v1/jobs-worker`,
		requests,
		nth(index, timeoutMs = 10_000) {
			if (requests[index]) return Promise.resolve(requests[index]!);
			return new Promise((resolve, reject) => {
				const timer = setTimeout(
					() => reject(new Error(`request #${index} did not arrive within ${timeoutMs} ms`)),
					timeoutMs,
				);
				waiters.set(index, (r) => {
					clearTimeout(timer);
					resolve(r);
				});
			});
		},
		respondWith(status) {
			answer = status;
		},
		async close() {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
