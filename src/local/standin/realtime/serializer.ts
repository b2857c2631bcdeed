/**
 * Phoenix socket frames as Supabase Realtime speaks them.
 * - vsn 1.0.0: JSON objects; outgoing frames carry only topic, event, payload
 *   and ref (Phoenix.Socket.V1.JSONSerializer `encode_v1_fields_only`).
 * - vsn 2.0.0: JSON arrays `[join_ref, ref, topic, event, payload]` plus
 *   Realtime's binary frames (supabase/realtime
 *   lib/realtime_web/socket/v2_serializer.ex): kind 3 "user broadcast push"
 *   from clients, kind 4 "user broadcast" to clients. realtime-js decodes
 *   kind 4 in src/lib/serializer.ts `_decodeUserBroadcast`.
 */

export type Vsn = '1.0.0' | '2.0.0';

/** A user broadcast carried as raw bytes (binary kinds 3/4). */
export interface UserBroadcast {
	topic: string;
	userEvent: string;
	encoding: 'json' | 'binary';
	payload: Buffer;
	/** JSON metadata (e.g. `{id}` for Broadcast from Database), or null. */
	metadata: Record<string, unknown> | null;
}

export interface InboundMessage {
	joinRef: string | null;
	ref: string | null;
	topic: string;
	event: string;
	/** JSON payload, or the user broadcast of a binary kind-3 frame. */
	payload: unknown;
	userBroadcast?: UserBroadcast;
}

const KIND_PUSH = 0;
const KIND_USER_BROADCAST_PUSH = 3;
const KIND_USER_BROADCAST = 4;

export class FrameError extends Error {}

function str(v: unknown): string | null {
	return v === null || v === undefined ? null : String(v);
}

export function decodeFrame(data: Buffer, isBinary: boolean, vsn: Vsn): InboundMessage {
	if (!isBinary) {
		const parsed: unknown = JSON.parse(data.toString('utf8'));
		if (vsn === '2.0.0') {
			if (!Array.isArray(parsed) || parsed.length < 5) throw new FrameError('expected V2 array');
			const [joinRef, ref, topic, event, payload] = parsed as unknown[];
			return { joinRef: str(joinRef), ref: str(ref), topic: String(topic), event: String(event), payload };
		}
		if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new FrameError('expected V1 object');
		const m = parsed as Record<string, unknown>;
		return {
			joinRef: str(m.join_ref),
			ref: str(m.ref),
			topic: String(m.topic),
			event: String(m.event),
			payload: m.payload,
		};
	}
	if (vsn !== '2.0.0') throw new FrameError('binary frames need vsn 2.0.0');
	const kind = data.readUInt8(0);
	if (kind === KIND_USER_BROADCAST_PUSH) {
		const joinRefSize = data.readUInt8(1);
		const refSize = data.readUInt8(2);
		const topicSize = data.readUInt8(3);
		const eventSize = data.readUInt8(4);
		const metadataSize = data.readUInt8(5);
		const encoding = data.readUInt8(6) === 0 ? 'binary' : 'json';
		let o = 7;
		const take = (n: number) => {
			const s = data.subarray(o, o + n);
			o += n;
			return s;
		};
		const joinRef = take(joinRefSize).toString('utf8');
		const ref = take(refSize).toString('utf8');
		const topic = take(topicSize).toString('utf8');
		const userEvent = take(eventSize).toString('utf8');
		const meta = take(metadataSize).toString('utf8');
		const payload = Buffer.from(data.subarray(o));
		const metadata = metadataSize > 0 ? (JSON.parse(meta) as Record<string, unknown>) : null;
		return {
			joinRef: joinRef || null,
			ref: ref || null,
			topic,
			event: 'broadcast',
			payload: null,
			userBroadcast: { topic, userEvent, encoding, payload, metadata },
		};
	}
	if (kind === KIND_PUSH) {
		const joinRefSize = data.readUInt8(1);
		const topicSize = data.readUInt8(2);
		const eventSize = data.readUInt8(3);
		let o = 4;
		const joinRef = data.subarray(o, (o += joinRefSize)).toString('utf8');
		const topic = data.subarray(o, (o += topicSize)).toString('utf8');
		const event = data.subarray(o, (o += eventSize)).toString('utf8');
		return { joinRef: joinRef || null, ref: null, topic, event, payload: Buffer.from(data.subarray(o)) };
	}
	throw new FrameError(`unknown binary frame kind ${kind}`);
}

export interface OutboundMessage {
	joinRef: string | null;
	ref: string | null;
	topic: string;
	event: string;
	payload: unknown;
}

/** A message, reply or JSON broadcast. Replies are messages with event phx_reply. */
export function encodeMessage(m: OutboundMessage, vsn: Vsn): string {
	if (vsn === '2.0.0') return JSON.stringify([m.joinRef, m.ref, m.topic, m.event, m.payload]);
	return JSON.stringify({ topic: m.topic, event: m.event, payload: m.payload, ref: m.ref });
}

/**
 * A user broadcast for one subscriber: binary kind 4 for vsn 2.0.0; for 1.0.0
 * Realtime converts JSON payloads to `{event, payload, type: 'broadcast', meta?}`
 * (lib/realtime_web/socket/user_broadcast.ex) and drops binary ones.
 */
export function encodeUserBroadcast(b: UserBroadcast, vsn: Vsn): string | Buffer | null {
	if (vsn === '2.0.0') {
		const topic = Buffer.from(b.topic, 'utf8');
		const event = Buffer.from(b.userEvent, 'utf8');
		const meta = b.metadata ? Buffer.from(JSON.stringify(b.metadata), 'utf8') : Buffer.alloc(0);
		if (topic.length > 255 || event.length > 255 || meta.length > 255)
			throw new FrameError('topic, event or metadata longer than 255 bytes');
		const header = Buffer.from([
			KIND_USER_BROADCAST,
			topic.length,
			event.length,
			meta.length,
			b.encoding === 'json' ? 1 : 0,
		]);
		return Buffer.concat([header, topic, event, meta, b.payload]);
	}
	if (b.encoding !== 'json') return null;
	const payload: Record<string, unknown> = {
		event: b.userEvent,
		payload: JSON.parse(b.payload.toString('utf8')),
		type: 'broadcast',
	};
	if (b.metadata) payload.meta = b.metadata;
	return encodeMessage({ joinRef: null, ref: null, topic: b.topic, event: 'broadcast', payload }, vsn);
}
