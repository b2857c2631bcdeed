// See https://svelte.dev/docs/kit/types#app.d.ts
import type { DemoConfig } from './demo/app/config.server.ts';
import type { DemoSession } from './demo/app/session.server.ts';
import type { JobLocale } from './lib/svelte/index.ts';

declare global {
	namespace App {
		interface Locals {
			config: DemoConfig;
			session: DemoSession;
			/** From Accept-Language: what the server renders in. */
			locale: JobLocale;
		}
	}
}

export {};
