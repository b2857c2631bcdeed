/** The hooks of bench/ts-loader.mjs: `.ts` files compiled by esbuild without keepNames. */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

export async function load(url, context, nextLoad) {
	if (!url.startsWith('file:') || !/\.(c|m)?ts$/.test(new URL(url).pathname)) return nextLoad(url, context);
	const path = fileURLToPath(url);
	const { code } = await transform(await readFile(path, 'utf8'), {
		loader: 'ts',
		format: 'esm',
		target: `node${process.versions.node}`,
		sourcefile: path,
		sourcemap: 'inline',
	});
	return { format: 'module', source: code, shortCircuit: true };
}
