// Builds the web app into web/dist: src/main.ts bundled to app.js (ES2022, minified, with a
// source map) plus index.html, style.css and _headers (the security headers) copied as they are.
//
//   node web/build.mjs            (from the repository root, or `npm run build -w web`)
//   node web/build.mjs --watch    rebuild on change

import * as esbuild from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staticFiles } from '../scripts/static-files.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const watch = process.argv.includes('--watch');
const copied = staticFiles(here, dist, ['index.html', 'style.css', '_headers']);

/** @type {import('esbuild').BuildOptions} */
const options = {
  entryPoints: [join(here, 'src/main.ts')],
  outfile: join(dist, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [copied.plugin],
};

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
  copied.watch();
  console.log('web: watching for changes');
} else {
  const started = Date.now();
  await esbuild.build(options);
  console.log(`web: built web/dist in ${Date.now() - started} ms`);
}
