import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'express/index': 'src/adapters/express/index.ts',
    'next/index': 'src/adapters/next/index.ts',
    // What `paywidget-server/next` resolves to in an edge bundle (package.json's `edge-light` condition).
    'next/edge': 'src/adapters/next/edge.ts',
    'koa/index': 'src/adapters/koa/index.ts',
    'sandbox/index': 'src/sandbox/index.ts',
    'testing/index': 'src/testing/index.ts',
    'redis/index': 'src/stores/redis/index.ts',
    // The `paywidget` command; its `#!/usr/bin/env node` line is kept by esbuild and makes tsup mark it executable.
    'cli/index': 'src/cli/index.ts',
  },
  format: ['esm', 'cjs'],
  // Shared chunks in CommonJS too (ESM has them by default): one copy of the core, so a PayError made with
  // require('paywidget-server') is a PayError to require('paywidget-server/express') as well.
  splitting: true,
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // The CommonJS output lowers class fields and renames the classes (`_class`): logs and util.inspect show that name.
  keepNames: true,
  // `paywidget --version`.
  define: { __PAYWIDGET_VERSION__: JSON.stringify(version) },
  // Frameworks are optional peer dependencies: never bundle them.
  external: ['express', 'koa', '@koa/router', 'next', 'ioredis', 'redis'],
  onSuccess: async () => {
    // The `paywidget` command runs as ESM (package.json's bin); one tsup config builds every entry in both formats.
    for (const file of ['dist/cli/index.cjs', 'dist/cli/index.cjs.map']) rmSync(file, { force: true });
    relativeSourceMaps('dist');
  },
});

/**
 * tsup's CommonJS splitting writes each .cjs.map with the build machine's absolute path of the file itself in
 * `file` and `sources`: it would ship the publisher's directories, and point map readers at files no install has.
 * Made relative to the map, as the ESM maps are.
 */
function relativeSourceMaps(directory: string): void {
  for (const entry of readdirSync(directory, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.cjs.map')) continue;
    const path = join(directory, entry);
    const map = JSON.parse(readFileSync(path, 'utf8')) as { file?: string; sources: string[] };
    const local = (source: string) => (isAbsolute(source) ? relative(dirname(path), source) || basename(source) : source);
    if (map.file !== undefined) map.file = basename(map.file);
    map.sources = map.sources.map(local);
    writeFileSync(path, JSON.stringify(map));
  }
}
