import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';

/**
 * Unit tests: Node, fake-indexeddb, the WXT fake browser behind `webextension-polyfill`.
 * The Svelte plugin compiles runes in `.svelte.ts` modules (the UI stores under `src/ui/state/`).
 */
export default defineConfig({
  plugins: [WxtVitest(), svelte()],
  resolve: {
    alias: [
      {
        find: /^webextension-polyfill$/,
        replacement: fileURLToPath(new URL('./tests/helpers/fake-polyfill.ts', import.meta.url)),
      },
    ],
  },
  test: {
    include: ['tests/unit/**/*.test.ts'],
    setupFiles: ['fake-indexeddb/auto'],
    environment: 'node',
    testTimeout: 30_000,
    // Logs (expected warnings, stack traces of failures a test provokes) are printed only for a failing test.
    silent: 'passed-only',
  },
});
