/**
 * The edge runtime's router, as far as the chaos run needs it: one URL for the
 * jobs-worker function, each call forwarded to one of its live instances in
 * turn (502 when none is up, as a cold start that failed would answer).
 */
import { createServer, request, type Server } from 'node:http';

export async function startGateway(nextUrl: () => string | null): Promise<{ url: string; close(): Promise<void> }> {
	const server: Server = createServer((req, res) => {
		const target = nextUrl();
		if (!target) {
			res.writeHead(502, { 'content-type': 'application/json' }).end('{"message":"no function instance is up"}');
			return;
		}
		const upstream = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (up) => {
			res.writeHead(up.statusCode ?? 502, up.headers);
			up.pipe(res);
		});
		upstream.on('error', (e) => {
			if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ message: `function instance unreachable: ${e.message}` }));
		});
		req.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const address = server.address();
	const port = typeof address === 'object' && address ? address.port : 0;
	return {
		url: `http://127.0.0.1:${port}`,
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}
