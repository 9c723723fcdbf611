import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import tsconfig from './tsconfig.json' with { type: 'json' };

// Tests import the package by its public names, resolved to the sources (the same map tsx reads).
const alias = Object.entries(tsconfig.compilerOptions.paths).map(([find, [target]]) => ({
  find: new RegExp(`^${find}$`),
  replacement: fileURLToPath(new URL(target as string, import.meta.url)),
}));

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Tests start real servers on ephemeral ports; two workers suit the 2-core CI machine.
    maxWorkers: 2,
    // What the library warns about on the console is shown for a failing test only.
    silent: 'passed-only',
  },
});
