/**
 * A real local HTTP server whose /slow route never answers, and which
 * reports when a client gives up (the socket closes).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowServer {
	url: string;
	/** Resolves when a request reaches /slow, with the time it arrived. */
	arrived: Promise<number>;
	/** Resolves when that request's connection closes, with the time. */
	closed: Promise<number>;
	close(): Promise<void>;
}

export async function startSlowServer(): Promise<SlowServer> {
	let onArrived!: (t: number) => void;
	let onClosed!: (t: number) => void;
	const arrived = new Promise<number>((r) => (onArrived = r));
	const closed = new Promise<number>((r) => (onClosed = r));
	const server = createServer((req: IncomingMessage, res: ServerResponse) => {
		if (req.url === '/fast') return void res.end('fast answer');
		res.on('close', () => onClosed(performance.now()));
		onArrived(performance.now());
		// Never ends: only the client aborting frees the socket.
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		arrived,
		closed,
		close: () =>
			new Promise<void>((r) => {
				server.closeAllConnections();
				server.close(() => r());
			}),
	};
}
