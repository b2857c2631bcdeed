/**
 * The settings of the role a request runs as, applied inside the request's
 * transaction as PostgREST does. PostgREST reads them when it loads its
 * configuration (src/PostgREST/Config/Database.hs `queryRoleSettings`): the
 * `ALTER ROLE ... SET` settings (pg_roles.rolconfig) of every role the
 * authenticator is a member of, those a user may set (pg_settings.context
 * 'user', or SET granted on the parameter), values lower-cased, and
 * default_transaction_isolation kept apart. Query/PreQuery.hs `txVarQuery`
 * then sets them with `set_config(key, value, true)` before the role itself.
 * They are read again on `NOTIFY pgrst, 'reload config'`.
 *
 * This is how Supabase's hosted timeouts reach a REST call: `statement_timeout`
 * is 3 s for anon and 8 s for authenticated (supabase/postgres
 * migrations/db/init-scripts/00000000000000-initial-schema.sql); a custom role
 * has its own settings, not those of the role it inherits from.
 */
import type { Sql } from '../db.ts';

const ROLE_SETTINGS_QUERY = `
with role_setting as (
  select r.rolname, unnest(r.rolconfig) as setting
    from pg_auth_members m
    join pg_roles r on r.oid = m.roleid
   where m.member = current_user::regrole::oid
),
kv_settings as (
  select rolname,
         substr(setting, 1, strpos(setting, '=') - 1) as key,
         lower(substr(setting, strpos(setting, '=') + 1)) as value
    from role_setting
)
select kv.rolname, kv.key, kv.value
  from kv_settings kv
  join pg_settings ps on ps.name = kv.key
   and (ps.context = 'user' or has_parameter_privilege(current_user::regrole::oid, ps.name, 'set'))
 where kv.key <> 'default_transaction_isolation'
 order by kv.rolname, kv.key`;

/** role -> [setting, value] pairs, read once per configuration load. */
export class RoleSettings {
	private byRole: Map<string, [string, string][]> | null = null;
	private loading: Promise<Map<string, [string, string][]>> | null = null;

	constructor(private readonly sql: Sql) {}

	/** Reads the settings now (PostgREST: at start and on 'reload config'). */
	async load(): Promise<void> {
		this.loading = null;
		this.byRole = await this.read();
	}

	/** Forgets the settings; the next request reads them again. */
	reload(): void {
		this.byRole = null;
		this.loading = null;
	}

	async of(role: string): Promise<[string, string][]> {
		if (!this.byRole) {
			this.loading ??= this.read();
			this.byRole = await this.loading;
		}
		return this.byRole.get(role) ?? [];
	}

	private async read(): Promise<Map<string, [string, string][]>> {
		const rows = await this.sql.unsafe<{ rolname: string; key: string; value: string }[]>(ROLE_SETTINGS_QUERY);
		const out = new Map<string, [string, string][]>();
		for (const r of rows) {
			const list = out.get(r.rolname) ?? [];
			list.push([r.key, r.value]);
			out.set(r.rolname, list);
		}
		return out;
	}
}
