import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'examples/**/.next/', 'test/fixtures/**/.next/', 'test/fixtures/**/.next-webpack/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  {
    // The core never depends on a framework or a Redis client.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: ['express', 'next', 'koa', '@koa/router', 'ioredis', 'redis'], patterns: ['next/*', '../adapters/*', '../../adapters/*', '../sandbox/*', '../../sandbox/*'] }],
    },
  },
);
