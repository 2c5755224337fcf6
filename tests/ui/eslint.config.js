// ESLint for the web view (ui/js, browser modules) and its unit tests
// (tests/ui, node). Run from the repository's root (`--config`
// makes the working directory the base of these paths): see package.json.
import js from '@eslint/js';
import globals from 'globals';

export default [
  {ignores: ['**/node_modules/**'] },
  {...js.configs.recommended, files: ['ui/js/**/*.js', 'tests/ui/**/*.{js,mjs}'] },
  {
    files: ['ui/js/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
    // As the Rust and Python code: no function over 120 lines.
    rules: { 'max-lines-per-function': ['error', { max: 120 }] },
  },
  {
    files: ['tests/ui/**/*.{js,mjs}'],
    languageOptions: { sourceType: 'module', globals: { ...globals.node } },
  },
  {
    files: ['ui/js/**/*.js', 'tests/ui/**/*.{js,mjs}'],
    rules: {
      // `catch (_)` and unused `_`-named parameters say "ignored" on purpose.
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
];
