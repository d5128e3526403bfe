// Builds the extension into extension/dist, the folder Chrome loads ("Load unpacked"):
// src/background.ts → background.js (the service worker, an ES module), src/options.ts →
// options.js and src/side_panel.ts → side_panel.js (pages), src/content/main.ts → content.js
// (the content script of every frame of allowed sites, registered at run time, a classic
// script) and src/readability-page.ts →
// readability.js (injected into a task tab on demand), plus manifest.json and the HTML pages
// copied as they are.
//
//   node extension/build.mjs            (from the repository root, or `npm run build -w extension`)
//   node extension/build.mjs --watch    rebuild on change

import * as esbuild from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staticFiles } from '../scripts/static-files.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const dist = join(here, 'dist');
const copied = staticFiles(here, dist, ['manifest.json', 'options.html', 'side_panel.html']);

/** @type {import('esbuild').BuildOptions} */
const common = {
  outdir: dist,
  bundle: true,
  platform: 'browser',
  target: 'es2022',
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
};

/** Content scripts are classic scripts: one self-contained IIFE each. */
/** @type {import('esbuild').BuildOptions} */
const scripts = {
  ...common,
  entryPoints: { content: join(here, 'src/content/main.ts'), readability: join(here, 'src/readability-page.ts') },
  format: 'iife',
};

/** @type {import('esbuild').BuildOptions} */
const options = {
  entryPoints: {
    background: join(here, 'src/background.ts'),
    options: join(here, 'src/options.ts'),
    side_panel: join(here, 'src/side_panel.ts'),
  },
  outdir: dist,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [copied.plugin],
};

/** Builds once; resolves when extension/dist is complete. */
export async function build() {
  await Promise.all([esbuild.build(options), esbuild.build(scripts)]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--watch')) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
    const scriptsCtx = await esbuild.context(scripts);
    await scriptsCtx.watch();
    copied.watch();
    console.log('extension: watching for changes');
  } else {
    const started = Date.now();
    await build();
    console.log(`extension: built extension/dist in ${Date.now() - started} ms`);
  }
}
