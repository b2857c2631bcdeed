/**
 * The dispatcher as a process: `DATABASE_URL=postgres://... npx tsx src/local/run-dispatcher.ts`.
 * Sends the stand-in pg_net queue and runs the stand-in cron jobs of that
 * database until SIGINT/SIGTERM. Local tooling only.
 */
import { startDispatcher } from './dispatcher.ts';

const url = process.env.DATABASE_URL;
if (!url) {
	console.error('DATABASE_URL is required (the database with the compat stand-ins)');
	process.exit(2);
}

const dispatcher = await startDispatcher({ url });
console.log(
	`dispatcher: ${dispatcher.sendsHttp ? 'sending net.http_request_queue' : 'pg_net present, not sending'}; ` +
		`${dispatcher.runsCron ? 'running cron.job' : 'pg_cron present or disabled, not running cron'}`,
);
dispatcher.on('response', (r) =>
	console.log(`net #${r.id} ${r.method} ${r.url} -> ${r.statusCode ?? (r.timedOut ? 'timeout' : r.errorMsg)}`),
);
dispatcher.on('cron', (r) => console.log(`cron ${r.jobname ?? r.jobid}: ${r.status} (${r.returnMessage})`));
dispatcher.on('error', (e: Error) => console.error(`dispatcher: ${e.message}`));

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
	process.once(signal, () => {
		void dispatcher.stop().then(() => process.exit(0));
	});
}
