/**
 * ESLint flat config: a small, deliberate rule set (each rule says why it is here). Layout and
 * spacing are Prettier's job (`.prettierrc.json`), so no stylistic rule is turned on.
 *
 * Type-aware rules (no-floating-promises, no-misused-promises) get their types from the
 * project's tsconfig through typescript-eslint's project service; `.svelte` files are parsed by
 * svelte-eslint-parser with typescript-eslint's parser for their `<script lang="ts">`.
 */
import globals from 'globals';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';

/** Code that runs in the extension service worker (no DOM, no `window` there; see ARCHITECTURE.md). */
const SERVICE_WORKER_FILES = ['entrypoints/background.ts', 'src/background/**', 'src/engines/webllm/service-worker.ts'];

/**
 * Globals a window has and a service worker lacks (`window`, `document`, `localStorage`,
 * `HTMLElement`, …), derived from the `globals` package's browser and service-worker lists so
 * new DOM names are covered when the package is updated.
 */
const DOM_ONLY_GLOBALS = Object.keys(globals.browser)
  .filter((name) => !(name in globals.serviceworker))
  .map((name) => ({
    name,
    message: `"${name}" does not exist in the extension service worker (no DOM, no window): use the offscreen document or a side-panel page.`,
  }));

export default tseslint.config(
  {
    // Build outputs, generated types, packaged third-party runtimes and hand-copied model files.
    ignores: ['.output/**', '.output-*/**', '.wxt/**', '.tmp/**', 'coverage/**', 'bench-results/**', 'public/**'],
  },
  {
    files: ['**/*.{ts,js,mjs,svelte}'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
        extraFileExtensions: ['.svelte'],
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: {
      // A disable comment that no longer silences anything hides the reason it was written for.
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // An un-awaited promise loses its rejection (unhandled) and its ordering; write `void` + a reason when fire-and-forget is meant.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async callback where a void one is expected (event listeners, forEach, setTimeout) drops its rejection; a promise in an `if` is always true.
      '@typescript-eslint/no-misused-promises': 'error',
      // Type-only imports are erased at build time (verbatimModuleSyntax): mark them so a value import never pulls in a module for a type.
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // A control character in a regex is almost always a typo; a deliberate one carries a disable comment saying so.
      'no-control-regex': 'error',
      // `==` coerces ('' == 0); `x == null` (null or undefined) stays allowed as the one deliberate use.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Dead variables and parameters hide mistakes; a leading `_` marks one that is unused on purpose (a positional parameter, a destructured-away field).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Plain JavaScript config files are outside the tsconfig: lint them without type information.
    files: ['**/*.{js,mjs}'],
    ...tseslint.configs.disableTypeChecked,
  },
  // Svelte components: svelte-eslint-parser for the markup, typescript-eslint's parser for the script.
  ...svelte.configs.base,
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: {
      parserOptions: {
        parser: tseslint.parser,
        projectService: true,
        extraFileExtensions: ['.svelte'],
      },
    },
    rules: {
      // `{@html}` bypasses Svelte's escaping: the only use renders Markdown sanitized by DOMPurify (src/ui/lib/markdown.ts) and says so where it is.
      'svelte/no-at-html-tags': 'error',
      // A `svelte-ignore` comment that silences nothing is stale and hides the warning it was written for.
      'svelte/no-unused-svelte-ignore': 'error',
    },
  },
  {
    // The service worker has no DOM: a `window`/`document` reference type-checks (the DOM lib is shared) but throws at run time there.
    files: SERVICE_WORKER_FILES,
    rules: {
      'no-restricted-globals': ['error', ...DOM_ONLY_GLOBALS],
      // The side-panel UI (Svelte, DOM, i18n) must never be bundled into the worker.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '(^|/)ui(/|$)', message: 'UI code (src/ui) belongs to extension pages, not the service worker.' },
            { regex: '^svelte(/|$)', message: 'Svelte needs a DOM; the service worker has none.' },
          ],
        },
      ],
    },
  },
);
