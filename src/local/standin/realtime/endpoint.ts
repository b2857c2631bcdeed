/**
 * The websocket endpoint `/realtime/v1/websocket?apikey=...&vsn=...`.
 * The handshake is refused like RealtimeWeb.UserSocket `connect/3` +
 * `handle_error/2`: the API key (query `apikey` or header `x-api-key`) must be
 * a JWT Realtime accepts, else an HTTP error with `{"error": message}`.
 * vsn defaults to 1.0.0, as Phoenix does when the client names none.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { verifyForRealtime } from '../jwt.ts';
import { Connection } from './connection.ts';
import type { RealtimeHub } from './hub.ts';
import type { Vsn } from './serializer.ts';

const HANDSHAKE_ERRORS: Record<string, [number, string]> = {
	expired: [401, 'Token has expired'],
	missing_claims: [401, 'Fields `role` and `exp` are required in JWT'],
	malformed: [401, 'The token provided is not a valid JWT'],
	signature: [401, 'Failed to validate JWT signature'],
	signer: [401, 'Failed to generate JWT signer, check your JWT secret or JWKS configuration'],
};

function refuse(socket: Duplex, status: number, message: string): void {
	const body = JSON.stringify({ error: message });
	socket.end(
		`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Error'}\r\ncontent-type: application/json; charset=utf-8\r\n` +
			`content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
	);
}

export function createRealtimeEndpoint(hub: RealtimeHub) {
	const wss = new WebSocketServer({ noServer: true });
	return {
		async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
			const headerKey = req.headers['x-api-key'];
			const apiKey = (Array.isArray(headerKey) ? headerKey[0] : headerKey) ?? url.searchParams.get('apikey');
			if (!apiKey) return refuse(socket, 401, 'API key is missing');
			const verified = await verifyForRealtime(hub.jwtSecret, apiKey, hub.mayBecome);
			if (!verified.ok) {
				const [status, message] = HANDSHAKE_ERRORS[verified.error.kind] ?? [500, 'Error connecting to Realtime'];
				return refuse(socket, status, message);
			}
			const vsn: Vsn = url.searchParams.get('vsn') === '2.0.0' ? '2.0.0' : '1.0.0';
			const headers: Record<string, string> = {};
			for (const [k, v] of Object.entries(req.headers)) if (k.startsWith('x-') && typeof v === 'string') headers[k] = v;
			wss.handleUpgrade(req, socket, head, (ws) => {
				hub.add(new Connection(ws, vsn, apiKey, headers, hub));
			});
		},
		close(): void {
			for (const c of hub.connections) c.ws.terminate();
			wss.close();
		},
	};
}
