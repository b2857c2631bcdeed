/**
 * The JobStore conformance suite over the unmodified supabase-js client
 * through the stand-in (PostgREST + Realtime over the same database): the
 * same tests, the same results as over postgres.js. Worker operations use a
 * service-key client, user behaviour user clients with minted tokens; a
 * store made straight from the harness adapter has Realtime, so its watch
 * listens on the job's topic (counted stores poll: their wrapper forwards
 * `call` only).
 */
import { describeAdminConformance } from '../store/admin-conformance.ts';
import { describeJobStoreConformance } from '../store/conformance.ts';
import { describeParentChildConformance } from '../store/family-conformance.ts';
import { describeQuestionsConformance } from '../store/questions-conformance.ts';
import { describeJobOutputConformance } from '../store/output-conformance.ts';
import { useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();

describeJobStoreConformance('supabase-js (stand-in, Realtime)', async () => f.harness);
describeParentChildConformance('supabase-js (stand-in, Realtime)', async () => f.harness);
describeAdminConformance('supabase-js (stand-in, Realtime)', async () => f.harness);
describeQuestionsConformance('supabase-js (stand-in, Realtime)', async () => f.harness);
describeJobOutputConformance('supabase-js (stand-in, Realtime)', async () => f.harness);
