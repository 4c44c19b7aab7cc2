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
    // Errors are recognised by identity: the service's refusals by their code (core/errors.ts), PostgreSQL's
    // by the named predicates of db/sqlstate.ts. A message is for the caller and may change.
    // No raw HTML: the console's pages are text and attributes preact escapes, never markup passed through.
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    ignores: ['src/db/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "BinaryExpression[operator=/^[!=]==?$/] > MemberExpression.left[property.name='message'], BinaryExpression[operator=/^[!=]==?$/] > MemberExpression.right[property.name='message']",
          message: 'Recognise an error by its code (isRefusal, isInvalidKey, db/sqlstate.ts), never by its message.',
        },
        {
          selector: 'BinaryExpression[operator=/^[!=]==?$/] > Literal[value=/^[0-9][0-9A-Z]{4}$/]',
          message: "Compare no SQLSTATE here: ask db/sqlstate.ts's predicates (isSerializationFailure, …).",
        },
        {
          selector: "JSXAttribute[name.name='dangerouslySetInnerHTML'], Property[key.name='dangerouslySetInnerHTML']",
          message:
            'Render text and attributes through preact (escaped); never pass markup through dangerouslySetInnerHTML.',
        },
      ],
    },
  },
  {
    // The console's one script of its own runs in the browser.
    files: ['src/console/assets/*.js'],
    languageOptions: {
      globals: {
        document: 'readonly',
        window: 'readonly',
        navigator: 'readonly',
        Element: 'readonly',
        HTMLFormElement: 'readonly',
      },
    },
  },
  {
    // CommonJS configuration files of tools (dependency-cruiser's).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // Small modules and functions in the service and its scripts (issue 21): past these, split by purpose.
    files: ['src/**/*.ts', 'src/**/*.tsx', 'scripts/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 250, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
);
