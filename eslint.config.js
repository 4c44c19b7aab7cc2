// typescript-eslint's recommended rules over the TypeScript sources; generated code is not linted.
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['generated/', 'node_modules/', '.data/', 'dist/'] },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed parameters are required by a signature (Express error handlers) but unused.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // CommonJS configuration files of tools (dependency-cruiser's).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // Small modules and functions in the service and its scripts (issue 21): past these, split by purpose.
    files: ['src/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 250, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
);
