// What the web app's and the extension's build scripts share: the files they copy into their
// dist folder as they are, after every successful esbuild build and whenever such a file changes
// (esbuild watches only what it bundles).

import { watch as watchFile } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Copies `files` from `from` to `to`, and how to keep them copied. */
export function staticFiles(from, to, files) {
  const copy = async () => {
    await mkdir(to, { recursive: true });
    await Promise.all(files.map((f) => copyFile(join(from, f), join(to, f))));
  };
  return {
    /** An esbuild plugin: copies the files after each build without errors. */
    plugin: {
      name: 'copy-static',
      setup(build) {
        build.onEnd(async (result) => {
          if (result.errors.length === 0) await copy();
        });
      },
    },
    /** Copies a file again whenever it changes (for --watch). */
    watch() {
      for (const f of files) watchFile(join(from, f), () => copy().catch((e) => console.error(e)));
    },
  };
}
