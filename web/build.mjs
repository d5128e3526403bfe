// Builds the web app into web/dist: src/main.ts bundled to app.js (ES2022, minified, with a
// source map) plus index.html and style.css copied as they are.
//
//   node web/build.mjs            (from the repository root, or `npm run build -w web`)
//   node web/build.mjs --watch    rebuild on change

import * as esbuild from 'esbuild';
import { watch as watchFile } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const watch = process.argv.includes('--watch');

const staticFiles = ['index.html', 'style.css'];

async function copyStatic() {
  await mkdir(dist, { recursive: true });
  await Promise.all(staticFiles.map((f) => copyFile(join(here, f), join(dist, f))));
}

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
  plugins: [
    {
      name: 'copy-static',
      setup(build) {
        build.onEnd(async (result) => {
          if (result.errors.length === 0) await copyStatic();
        });
      },
    },
  ],
};

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
  // esbuild only watches what it bundles; the static files are copied when they change.
  for (const f of staticFiles) watchFile(join(here, f), () => copyStatic().catch((e) => console.error(e)));
  console.log('web: watching for changes');
} else {
  const started = Date.now();
  await esbuild.build(options);
  console.log(`web: built web/dist in ${Date.now() - started} ms`);
}
