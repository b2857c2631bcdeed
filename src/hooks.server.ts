/**
 * Every request: the demo's configuration, the visitor's anonymous session
 * (signed in on the first visit, refreshed before it expires, kept in an
 * httpOnly cookie) and the language from Accept-Language.
 */
import type { Handle } from '@sveltejs/kit';
import { env } from '$env/dynamic/private';
import { env as publicEnv } from '$env/dynamic/public';
import { readDemoConfig } from './demo/app/config.server.ts';
import { localeFromAcceptLanguage } from './demo/app/i18n.ts';
import {
	decodeSession,
	SESSION_COOKIE,
	keepFresh,
	setSessionCookie,
	signInAnonymously,
	type DemoSession,
} from './demo/app/session.server.ts';

export const handle: Handle = async ({ event, resolve }) => {
	const config = readDemoConfig({ ...env, ...publicEnv });
	event.locals.config = config;
	event.locals.locale = localeFromAcceptLanguage(event.request.headers.get('accept-language'));
	const stored = decodeSession(event.cookies.get(SESSION_COOKIE));
	let session: DemoSession | null = stored ? await keepFresh(config, stored) : null;
	session ??= await signInAnonymously(config);
	if (session !== stored) setSessionCookie(event.cookies, session);
	event.locals.session = session;
	// The document's language is the visitor's, from the first byte (screen readers pick their voice from it).
	const lang = event.locals.locale;
	return await resolve(event, { transformPageChunk: ({ html }) => html.replace('%lang%', lang) });
};
