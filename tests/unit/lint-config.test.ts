/**
 * The project's ESLint config (eslint.config.js), through ESLint's own Node API: the
 * service-worker rule reports DOM globals and UI imports in service-worker files and only there,
 * and every service-worker file of ARCHITECTURE.md is still covered (a renamed file would
 * silently leave the rule).
 *
 * Type-aware rules are switched off here (typescript-eslint's `disableTypeChecked`): building the
 * whole project's type program would make this test slow, and the rules under test need no types.
 * `npm run lint` runs the full config over the tree.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked as Linter.Config });

/** The service-worker files named in ARCHITECTURE.md ("no DOM and no `window` here"). */
const SERVICE_WORKER_FILES = ['entrypoints/background.ts', 'src/background/index.ts', 'src/engines/webllm/service-worker.ts'];

/** Lints `code` as if it were the file at `filePath` (relative to the repository root). */
async function lint(code: string, filePath: string): Promise<Linter.LintMessage[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result?.messages ?? [];
}

const ruleIds = (messages: Linter.LintMessage[]) => messages.map((m) => m.ruleId);

describe('service-worker rule (no DOM, no UI)', () => {
  it.each(SERVICE_WORKER_FILES)('reports window and document in %s', async (file) => {
    const messages = await lint('export const where = window.location.href + document.title;\n', file);
    expect(messages.map((m) => [m.ruleId, m.line, m.column])).toEqual([
      ['no-restricted-globals', 1, 22], // 'export const where = ' is 21 characters
      ['no-restricted-globals', 1, 45], // + 'window.location.href + ' (23)
    ]);
    expect(messages[0]?.message).toContain('"window" does not exist in the extension service worker');
  });

  it('reports other DOM-only globals and leaves worker globals alone', async () => {
    const code = [
      'export const a = localStorage.getItem("x");',
      'export const b = new DOMParser();',
      'export const c = self.registration;',
      'export const d = fetch;',
      'export const e = caches;',
      'export const f = navigator.gpu;',
      '',
    ].join('\n');
    const messages = await lint(code, 'src/background/index.ts');
    expect(messages.map((m) => [m.ruleId, m.line])).toEqual([
      ['no-restricted-globals', 1],
      ['no-restricted-globals', 2],
    ]);
  });

  it('reports imports of the UI and of Svelte', async () => {
    const code = [
      "import { t } from '../ui/i18n/index.svelte';",
      "import { mount } from 'svelte';",
      "import { createEngineManager } from '../core/engine-manager';",
      'export { t, mount, createEngineManager };',
      '',
    ].join('\n');
    const messages = await lint(code, 'src/background/index.ts');
    expect(messages.map((m) => [m.ruleId, m.line])).toEqual([
      ['no-restricted-imports', 1],
      ['no-restricted-imports', 2],
    ]);
  });

  it('does not apply outside the service worker', async () => {
    const code = "import { t } from '../ui/i18n/index.svelte';\nexport const where = window.location.href + document.title + t('x');\n";
    expect(ruleIds(await lint(code, 'src/core/handlers.ts'))).toEqual([]);
    expect(ruleIds(await lint(code, 'src/ui/lib/format.ts'))).toEqual([]);
  });

  it('is switched on for every service-worker file that exists', async () => {
    for (const file of SERVICE_WORKER_FILES) {
      expect(existsSync(join(root, file)), file).toBe(true);
      const config = (await eslint.calculateConfigForFile(file)) as Linter.Config;
      expect(JSON.stringify(config.rules?.['no-restricted-globals']), file).toContain('"name":"document"');
      expect(await eslint.isPathIgnored(file), file).toBe(false);
    }
  });
});

describe('general rules', () => {
  it('reports ==, unused variables without a leading _, and value imports used only as types', async () => {
    const code = [
      "import { EngineError } from '../engines/types';",
      'export function f(a: number, _b: number, c: number): boolean {',
      '  const unused = 1;',
      '  const _kept = 2;',
      '  const e: EngineError | null = null;',
      '  return a == c && e === null;',
      '}',
      '',
    ].join('\n');
    const messages = await lint(code, 'src/core/example.ts');
    expect(messages.map((m) => [m.ruleId, m.line]).sort()).toEqual(
      [
        ['@typescript-eslint/consistent-type-imports', 1],
        ['@typescript-eslint/no-unused-vars', 3],
        ['eqeqeq', 6],
      ].sort(),
    );
  });
});
