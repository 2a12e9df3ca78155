// Lint (pnpm run lint; scripts/test.sh runs it before the suites): typescript-eslint's type-aware
// promise rules, on every TypeScript file the typecheck covers. A promise nobody awaits or handles
// (in a deploy path: an error nobody sees) is an error; one dropped on purpose says so with `void`
// and a comment saying why. Formatting is not this step's business.
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['**/node_modules/**', '**/*.js', 'core/vendor/**', '.tap/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // One program for the whole workspace, the typecheck's own (tsconfig.json).
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // tap tracks the subtests t.test() starts (the file ends after them): not awaiting one is its idiom.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }] }],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
];
