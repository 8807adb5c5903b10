/**
 * The layer rule (`.dependency-cruiser.cjs`, ARCHITECTURE.md "## Layers") catches what it must:
 * the repository's own configuration is run by the real dependency-cruiser CLI over small
 * fixture trees written to a temporary folder — a forbidden import (type-only included), a
 * cycle, an import outside a stated exception — and a clean tree passes. `npm run lint:deps`
 * runs the same configuration over `src/` and `entrypoints/`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(__dirname, '../..');
const cli = join(repo, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

let dir: string | null = null;
function clean(): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
}
afterEach(clean);

/** Writes `files` (path → source) into a fresh folder and returns the violations the repository's rules find there. */
function cruise(files: Record<string, string>): Violation[] {
  dir = mkdtempSync(join(tmpdir(), 'layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  // The repository's rules, without its tsconfig (the fixture has none; relative imports need none).
  writeFileSync(
    join(dir, '.dependency-cruiser.cjs'),
    `const c = require(${JSON.stringify(join(repo, '.dependency-cruiser.cjs'))});\nconst { tsConfig: _t, ...options } = c.options;\nmodule.exports = { ...c, options };\n`,
  );
  let out: string;
  try {
    out = execFileSync(process.execPath, [cli, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', 'src'], { cwd: dir, encoding: 'utf8' });
  } catch (error) {
    // Exit code = number of errors; the JSON report is still on stdout.
    out = (error as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

const names = (violations: Violation[]) => violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();

describe('layer rule (dependency-cruiser)', () => {
  it('passes a tree that follows the layers', () => {
    expect(
      cruise({
        'src/model/kinds.ts': "export const KINDS = ['a', 'b'] as const;\n",
        'src/db/schema.ts': "import type { KINDS } from '../model/kinds';\nexport type Row = { kind: (typeof KINDS)[number] };\n",
        'src/memory/store.ts': "import type { Row } from '../db/schema';\nexport const rows: Row[] = [];\n",
        'src/ui/panel.ts': "import { KINDS } from '../model/kinds';\nexport const list = [...KINDS];\n",
      }),
    ).toEqual([]);
  }, 60_000);

  describe('a tree that breaks it', () => {
    let violations: string[] = [];
    beforeAll(() => {
      violations = names(
        cruise({
          // An upward import, type-only, from the leaf.
          'src/model/kinds.ts': "import type { Row } from '../db/schema';\nexport type Kind = Row['kind'];\n",
          'src/db/schema.ts': 'export type Row = { kind: string };\n',
          // The panel importing the core.
          'src/ui/panel.ts': "import { start } from '../core/index';\nstart();\n",
          'src/core/index.ts': 'export function start(): void {}\n',
          // A cycle inside one folder, through type imports only.
          'src/prompt/a.ts': "import type { B } from './b';\nexport type A = { b?: B };\n",
          'src/prompt/b.ts': "import type { A } from './a';\nexport type B = { a?: A };\n",
          // A stated exception (ui/lib/keys.ts → commands.ts) and the same import from another file.
          'src/memory/long-term/commands.ts': 'export function parseMemoryCommand(text: string): string | null { return text || null; }\n',
          'src/ui/lib/keys.ts':
            "import { parseMemoryCommand } from '../../memory/long-term/commands';\nexport const isCommand = (t: string) => parseMemoryCommand(t) !== null;\n",
          'src/ui/lib/other.ts': "import { parseMemoryCommand } from '../../memory/long-term/commands';\nexport const other = parseMemoryCommand;\n",
          // The service worker importing the panel.
          'src/background/index.ts': "import { mount } from '../ui/mount';\nexport function startBackground(): void { mount(); }\n",
          'src/ui/mount.ts': 'export function mount(): void {}\n',
        }),
      );
    }, 60_000);
    afterAll(clean);

    it('fails on an upward import, a type-only one included', () => {
      expect(violations).toContain('layer-model: src/model/kinds.ts → src/db/schema.ts');
      expect(violations).toContain('layer-ui: src/ui/panel.ts → src/core/index.ts');
    });

    it('fails on any import cycle, also inside one folder and through type imports', () => {
      expect(violations.filter((v) => v.startsWith('no-circular'))).toHaveLength(1);
      expect(violations.find((v) => v.startsWith('no-circular'))).toMatch(/^no-circular: src\/prompt\/[ab]\.ts → src\/prompt\/[ab]\.ts$/);
    });

    it('allows a stated exception only for the file it names', () => {
      expect(violations).toContain('layer-ui: src/ui/lib/other.ts → src/memory/long-term/commands.ts');
      expect(violations.filter((v) => v.includes('src/ui/lib/keys.ts'))).toEqual([]);
    });

    it('keeps the service worker away from the panel', () => {
      expect(violations).toContain('layer-background: src/background/index.ts → src/ui/mount.ts');
      expect(violations).toContain('service-worker-stays-small: src/background/index.ts → src/ui/mount.ts');
    });

    it('reports nothing else', () => {
      expect(violations).toHaveLength(6);
    });
  });
});
