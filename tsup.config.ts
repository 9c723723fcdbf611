import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'express/index': 'src/adapters/express/index.ts',
    'next/index': 'src/adapters/next/index.ts',
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
});
