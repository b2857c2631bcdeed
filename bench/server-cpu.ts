/**
 * The CPU time a local PostgreSQL server has used, all its processes together
 * (Linux /proc): what a probe prints beside its Node CPU, so an A/B can tell
 * the server's share of a change from the client's. Live processes are read
 * from their schedstat (ns); those already ended count through the
 * postmaster's children times (stat cutime + cstime, clock ticks).
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ: 100 on Linux

/** The postmaster listening on `port`, or null when none is found here (not Linux, or a remote server). */
export function findPostmaster(port: number): number | null {
	let pids: string[];
	try {
		pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
	} catch {
		return null;
	}
	for (const pid of pids) {
		try {
			const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
			if (args[0]?.endsWith('/postgres') && args[args.indexOf('-p') + 1] === String(port)) return Number(pid);
		} catch {
			// ended meanwhile, or not ours to read
		}
	}
	return null;
}

/** Milliseconds of CPU the server's processes (the postmaster and every child, ended ones too) have used. */
export function serverCpuMs(postmaster: number): number {
	const stat = (pid: number | string) => {
		const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
		return text.slice(text.lastIndexOf(')') + 2).split(' ');
	};
	const own = stat(postmaster);
	// Fields after the command: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime.
	let ms = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * TICK_MS;
	for (const pid of readdirSync('/proc')) {
		if (!/^\d+$/.test(pid)) continue;
		try {
			if (Number(stat(pid)[1]) !== postmaster) continue;
			ms += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
		} catch {
			// ended between the two reads: counted by the postmaster's children times from now on
		}
	}
	return ms;
}
