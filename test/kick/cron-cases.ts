/**
 * One list of cron expressions and what pg_cron makes of them, held against
 * both checks: cronProblem in TypeScript and supabase_jobs.cron_problem in SQL.
 */
export const ACCEPTED = [
	'* * * * *',
	'0 2 * * *',
	'59 23 31 12 7',
	'0 0 1 1 0',
	'*/15 * * * *',
	'0 9-17/4 * * *',
	'0,30 * * * *',
	'0 0 * * mon-fri',
	'0 0 * JAN-MAR SUN',
	'0 0 * jan,jul sat,sun',
	'0 12 $ * *',
	'  5 4   * * *  ',
	'0 0 * * 0-7/2',
	'*/60 * * * *',
	'@daily',
	'@hourly',
	'@weekly',
	'@monthly',
	'@yearly',
	'@annually',
	'@midnight',
] as const;

/** Refused, with the sentence both checks give. */
export const REFUSED: readonly (readonly [string, string])[] = [
	['61 25 * * *', 'the minute is 0-59; got 61'],
	['0 24 * * *', 'the hour is 0-23; got 24'],
	['0 0 0 * *', 'the day of month is 1-31; got 0'],
	['0 0 32 * *', 'the day of month is 1-31; got 32'],
	['0 0 1 13 *', 'the month is 1-12; got 13'],
	['0 0 1 0 *', 'the month is 1-12; got 0'],
	['0 0 * * 8', 'the day of week is 0-7; got 8'],
	['0-60 0 * * *', 'the minute is 0-59; got 60'],
	['0,61 * * * *', 'the minute is 0-59; got 61'],
	['0 0 * foo *', "'foo' is not a month name (jan-dec)"],
	['0 0 * * funday', "'funday' is not a day of week name (sun-sat)"],
	['mon * * * *', "the minute takes no names; got 'mon'"],
	['5/15 * * * *', "the minute field '5/15' has a step without a range: write */15 or 5-59/15"],
	['*/0 * * * *', 'the minute step is 1-60; got 0'],
	['*/61 * * * *', 'the minute step is 1-60; got 61'],
	['0 0 * * */8', 'the day of week step is 1-7; got 8'],
	['0 17-9 * * *', "the hour range '17-9' runs backwards"],
	['0 0 * * ?', "the day of week field '?' is not a number, a name, a range a-b, * or a step */n or a-b/n"],
	['0 0 L * *', "the day of month takes no names; got 'l'"],
	[
		'every night',
		"a cron expression is five fields (minute hour day-of-month month day-of-week, in UTC), e.g. '0 2 * * *'; got 'every night'",
	],
	[
		'0 0 * * * *',
		"a cron expression is five fields (minute hour day-of-month month day-of-week, in UTC), e.g. '0 2 * * *'; got '0 0 * * * *'",
	],
	[
		'',
		"a cron expression is five fields (minute hour day-of-month month day-of-week, in UTC), e.g. '0 2 * * *'; got ''",
	],
	[
		'@reboot',
		"'@reboot' is not a schedule pg_cron runs: use @yearly, @monthly, @weekly, @daily, @hourly or five fields",
	],
	[
		'5 seconds',
		"a recurring job runs at most once a minute (one job per minute slot): write five fields, not '5 seconds'",
	],
];
