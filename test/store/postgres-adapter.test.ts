/**
 * JobStore over postgres.js 3 (the driver `npm i postgres@3` installs): the
 * conformance suites and the adapter's own tests (postgres-adapter-suite.ts).
 */
import { useTestDatabase } from '../helpers/db.ts';
import { describePostgresAdapter } from './postgres-adapter-suite.ts';

const db = await useTestDatabase();
describePostgresAdapter('postgres.js', db, (options) => db.connect(options));
