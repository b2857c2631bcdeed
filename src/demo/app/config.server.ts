/**
 * Where the demo's server finds its Supabase (real or the local stand-in),
 * from the environment. scripts/demo.ts sets these; on a real project you set
 * PUBLIC_SUPABASE_URL and PUBLIC_SUPABASE_ANON_KEY (or the publishable key).
 */
export interface DemoConfig {
	supabaseUrl: string;
	/** The anon key or a publishable key (sb_publishable_...): safe in the browser. */
	anonKey: string;
	/**
	 * How visitors get a session: 'supabase' = GoTrue's anonymous sign-in on the
	 * project; 'standin' = the local stand-in mints the token (embedded mode).
	 */
	auth: { mode: 'supabase' } | { mode: 'standin'; jwtSecret: string; databaseUrl: string };
}

export function readDemoConfig(env: Record<string, string | undefined>): DemoConfig {
	const supabaseUrl = env.PUBLIC_SUPABASE_URL ?? env.SUPABASE_URL;
	const anonKey =
		env.PUBLIC_SUPABASE_ANON_KEY ??
		env.PUBLIC_SUPABASE_PUBLISHABLE_KEY ??
		env.SUPABASE_ANON_KEY ??
		env.SUPABASE_PUBLISHABLE_KEY;
	if (!supabaseUrl || !anonKey)
		throw new Error(
			'The demo needs PUBLIC_SUPABASE_URL and PUBLIC_SUPABASE_ANON_KEY (or PUBLIC_SUPABASE_PUBLISHABLE_KEY): run it with `npm run demo`.',
		);
	if (env.DEMO_AUTH === 'standin') {
		const jwtSecret = env.DEMO_STANDIN_JWT_SECRET;
		const databaseUrl = env.DEMO_STANDIN_DATABASE_URL;
		if (!jwtSecret || !databaseUrl)
			throw new Error('DEMO_AUTH=standin needs DEMO_STANDIN_JWT_SECRET and DEMO_STANDIN_DATABASE_URL');
		return { supabaseUrl, anonKey, auth: { mode: 'standin', jwtSecret, databaseUrl } };
	}
	return { supabaseUrl, anonKey, auth: { mode: 'supabase' } };
}
