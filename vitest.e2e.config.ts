import { defineConfig } from 'vitest/config';

/** End-to-end tests: the built extension (`.output/chrome-mv3`) in real headless Chromium. */
export default defineConfig({
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    environment: 'node',
    testTimeout: 240_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    // Logs (expected warnings, stack traces of failures a test provokes) are printed only for a failing test.
    silent: 'passed-only',
  },
});
