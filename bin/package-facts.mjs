// What the installed package's migrations set up, read from their text (the
// package ships them): the pg_cron schedules its install_schedules() creates
// and the policies it keeps on realtime.messages. `doctor` checks a database
// against these, so a version that adds or renames one is checked without
// anyone editing the doctor.

/**
 * The text without full-line `--` comments (a comment may mention a policy).
 * @param {string} sql
 */
function withoutLineComments(sql) {
	return sql.replace(/^[ \t]*--.*$/gm, '');
}

/**
 * The schedule names the last definition of supabase_jobs.install_schedules()
 * creates: every `cron.schedule('<name>', ...)` with a literal name (the
 * recurring ones, named per row, are not among them).
 * @param {{ text: string }[]} migrations in apply order
 * @returns {string[]}
 */
export function scheduleNames(migrations) {
	let body = null;
	for (const m of migrations) {
		const text = withoutLineComments(m.text);
		const start = /create\s+(?:or\s+replace\s+)?function\s+supabase_jobs\.install_schedules\s*\(\s*\)/gi;
		for (let found = start.exec(text); found; found = start.exec(text)) {
			// The body between its dollar quotes, whatever their tag ($$, $body$).
			const quote = /\bas\s+(\$\w*\$)/i.exec(text.slice(found.index));
			if (!quote) continue;
			const open = found.index + quote.index + quote[0].length;
			const close = text.indexOf(/** @type {string} */ (quote[1]), open);
			if (close > 0) body = text.slice(open, close);
		}
	}
	if (body === null) return [];
	/** @type {string[]} */
	const names = [];
	for (const m of body.matchAll(/cron\.schedule\s*\(\s*'([^']+)'\s*,/g)) {
		if (!names.includes(/** @type {string} */ (m[1]))) names.push(/** @type {string} */ (m[1]));
	}
	return names;
}

/**
 * The policies on realtime.messages once every migration has run, each with
 * the statement that creates it (the exact fix when one is missing).
 * @param {{ text: string }[]} migrations in apply order
 * @returns {Map<string, string>} policy name -> its `create policy ...;`
 */
export function realtimePolicies(migrations) {
	/** @type {Map<string, string>} */
	const policies = new Map();
	const statement =
		/\b(?:create\s+policy\s+("?)(\w+)\1\s+on\s+realtime\.messages\b[^;]*;|drop\s+policy\s+(?:if\s+exists\s+)?("?)(\w+)\3\s+on\s+realtime\.messages\b)/gi;
	for (const m of migrations) {
		for (const s of withoutLineComments(m.text).matchAll(statement)) {
			if (s[2]) policies.set(s[2], s[0].trim());
			else if (s[4]) policies.delete(s[4]);
		}
	}
	return policies;
}
