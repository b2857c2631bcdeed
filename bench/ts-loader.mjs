/**
 * Runs the bench's TypeScript as the published package runs (compiled, no
 * extra code): tsx compiles with esbuild's keepNames, which wraps every named
 * function and closure in a `__name()` call (an Object.defineProperty each
 * time one is created). The package ships TypeScript's output (dist/), which
 * has none of that, and graphile-worker and pg-boss run their published
 * JavaScript: under tsx, the runner's start of a job measured ~3x its
 * compiled cost. Types are stripped here with esbuild, names left alone.
 * Usage: `node --import ./bench/ts-loader.mjs bench/run.ts`.
 */
import { register } from 'node:module';

register('./ts-loader-hooks.mjs', import.meta.url);
