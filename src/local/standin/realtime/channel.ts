/**
 * One joined Realtime channel and the rules of joining it, after
 * supabase/realtime lib/realtime_web/channels/realtime_channel.ex `join/3`:
 * confirm the token (role + exp), authorize private channels by RLS, echo
 * postgres_changes bindings with integer ids, and the reasons it refuses with
 * (`log_error`/`maybe_log_warning` prefix the code: "Code: message").
 */
import type { Claims, RealtimeTokenError } from '../jwt.ts';
import type { ExtensionPolicies } from './authorize.ts';

export interface PostgresBinding {
	/** What the client sent (event, schema, table, filter, ...), echoed with `id`. */
	params: Record<string, unknown>;
	id: number;
}

export interface Channel {
	topic: string;
	subTopic: string;
	joinRef: string | null;
	isPrivate: boolean;
	accessToken: string;
	claims: Claims;
	policies: ExtensionPolicies | null;
	canWrite: boolean | null;
	selfBroadcast: boolean;
	ackBroadcast: boolean;
	presenceEnabled: boolean;
	postgresChanges: PostgresBinding[];
	confirmTimer: NodeJS.Timeout | null;
	/** While a `replication_ready` channel waits for the tenant's replication. */
	readyTimer: NodeJS.Timeout | null;
}

/** `:erlang.phash2/1`-like: a stable integer in 0..2^27-1 for a binding's params. */
export function bindingId(params: Record<string, unknown>): number {
	const text = JSON.stringify(
		Object.keys(params)
			.sort()
			.map((k) => [k, params[k]]),
	);
	let h = 2166136261;
	for (let i = 0; i < text.length; i++) {
		h ^= text.charCodeAt(i);
		h = Math.imul(h, 16777619) >>> 0;
	}
	return h & 0x7ffffff;
}

/** The join error reason for a token Realtime refuses (realtime_channel.ex join/3 `else` branches). */
export function tokenJoinReason(error: RealtimeTokenError): string {
	switch (error.kind) {
		case 'expired':
		case 'missing_claims':
		case 'role':
			return `InvalidJWTToken: ${error.message}`;
		case 'malformed':
			return `MalformedJWT: ${error.message}`;
		case 'signature':
			return `JwtSignatureError: ${error.message}`;
		case 'signer':
			return `JwtSignerError: ${error.message}`;
	}
}

/** Join refusals for quotas and the tenant's database (realtime_channel.ex `join/3` `else` branches). */
export const JOIN_REFUSALS = {
	tooManyChannels: 'ChannelRateLimitReached: Too many channels',
	tooManyJoins: 'ClientJoinRateLimitReached: Too many joins per second',
	missingPartition: 'MissingPartition: Realtime was unable to find the expected messages partition',
} as const;

/** Whether `e` is the error of an insert into realtime.messages with no partition for it (authorization.ex). */
export function isMissingPartition(e: unknown): boolean {
	const err = e as { code?: string; table_name?: string } | null;
	return err?.code === '23514' && err.table_name === 'messages';
}

export function unauthorizedMessage(subTopic: string): string {
	return `You do not have permissions to read from this Channel topic: ${subTopic}`;
}

/** The confirm-token interval: min(5 minutes, time to expiry), as `confirm_token/1`. */
export function confirmInterval(claims: Claims): number {
	const exp = typeof claims.exp === 'number' ? claims.exp : 0;
	return Math.max(0, Math.min(5 * 60 * 1000, (exp - Math.floor(Date.now() / 1000)) * 1000));
}
