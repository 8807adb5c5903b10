/**
 * The vault lock's unlock cost in real headless Chromium with the built extension (issue 16,
 * `npm run bench -- vault`): unlock + first answered retrieval at N memories (target ≤ 1 s at 10k),
 * and the same store's first retrieval with the lock off, side by side in one run.
 *
 * A fresh profile; the production build with the 384-d fixture embedder packaged (as the coldstart
 * bench: nothing downloaded); the lock turned on (`vault.enable`) on the empty store, then N
 * memories seeded through the core's own `memory.import` (so every row and index block is written
 * sealed). Then, `runs` times each:
 * - **lock on, offscreen restart** (what the user meets after the browser starts, or after the core
 *   was closed): the service worker closes the offscreen document; in the panel page
 *   `core.ensure` (the core starts locked), then `vault.unlock` (key derivation, unwrap, opening the
 *   store), then one memory search (`memory.list` with `search`: six words of a known memory, which
 *   must be in the answer). Timed in the page: "core answers", "unlock answered" and "unlock +
 *   first answered search" (from the unlock request to the search's answer: the issue's measure).
 * - **lock on, lock → unlock** in the same core (auto-lock, then the user comes back): `vault.lock`,
 *   then the unlock and the search, timed the same way.
 * - **lock off** (the same store after `vault.disable` decrypted it in place): the offscreen restart
 *   and the search, as the coldstart bench times them: "core answers", "first answered search
 *   after the core answers" (the lock-off counterpart of the unlock + search) and the total.
 * Each run is followed by waiting for the core to settle (embedder ready, job queue idle).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { callCore, launchExtension, PACKAGED_EMBEDDING_MODEL, startCountingProxy } from '../tests/e2e/harness';
import type { VaultStatus } from '../src/model/vault';
import { defineBench, type HeadlineRow } from './lib/bench';
import { formatMs, summarize, type Summary } from './lib/stats';
import { seedMemories } from './data/memory-file';
import { buildWithPackagedEmbedder, offscreenTimeline, seed, serviceWorker, settle } from './coldstart.bench';
import type { ExtensionBrowser } from '../tests/e2e/harness';

/** Parameters: store sizes, runs per measured kind, memories per import request. */
interface VaultParams {
  sizes: number[];
  runs: number;
  importBatch: number;
}

const DIMENSION = 384;
/** The target of issue 16: unlock + first answered retrieval at 10k memories. */
const TARGET_MS = 1000;
const PASSPHRASE = 'bench passphrase, long enough';

/**
 * In-page script (source text: tsx would wrap a function passed to `page.evaluate` with its
 * `__name` helper, which the page lacks): optionally `core.ensure` first, then optionally
 * `vault.unlock`, then the search; each step's time from the start (ms, page clock).
 */
const TIMED_STEPS = `async ({ ensure, unlock, query, expectId }) => {
  const send = async (type, data) => {
    const reply = await chrome.runtime.sendMessage({ id: Math.floor(Math.random() * 1e9), type, data, timestamp: Date.now() });
    if (reply?.err) throw new Error(type + ': ' + (reply.err.message ?? JSON.stringify(reply.err)));
    return reply?.res;
  };
  const t0 = performance.now();
  if (ensure) await send('core.ensure');
  const t1 = performance.now();
  if (unlock) await send('vault.unlock', { passphrase: unlock });
  const t2 = performance.now();
  const hits = await send('memory.list', { namespace: 'default', search: query });
  const t3 = performance.now();
  return { coreMs: t1 - t0, unlockMs: t2 - t1, searchMs: t3 - t2, unlockAndSearchMs: t3 - t1, totalMs: t3 - t0, found: hits.some((h) => h.id === expectId), hits: hits.length };
}`;

interface Steps {
  coreMs: number;
  unlockMs: number;
  searchMs: number;
  unlockAndSearchMs: number;
  totalMs: number;
}

/** Runs TIMED_STEPS in `page`. @throws Error when the search's answer lacks the probe's memory. */
async function timedSteps(page: Page, options: { ensure: boolean; unlock: string | null; query: string; expectId: string }): Promise<Steps> {
  const r = (await page.evaluate(`(${TIMED_STEPS})(${JSON.stringify(options)})`)) as Steps & { found: boolean; hits: number };
  if (!r.found) throw new Error(`the search "${options.query}" did not return memory ${options.expectId} (${r.hits} hits)`);
  return { coreMs: r.coreMs, unlockMs: r.unlockMs, searchMs: r.searchMs, unlockAndSearchMs: r.unlockAndSearchMs, totalMs: r.totalMs };
}

/** Polls `vault.status` until no in-place pass runs. @throws Error after `timeoutMs`. */
async function waitForVaultIdle(page: Page, timeoutMs = 1_800_000): Promise<VaultStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await callCore<VaultStatus>(page, 'vault.status');
    if (!status.migrating) return status;
    if (Date.now() > deadline) throw new Error(`the in-place pass did not finish: ${JSON.stringify(status)}`);
    await page.waitForTimeout(100);
  }
}

/**
 * Where the wait went inside the memory core (ms, from the offscreen document's `recall:*` marks of
 * the run): the core's start (`core.start` → `core.ready`; with the lock on it starts at the unlock
 * and the first search waits for it), of it the index read (`store.read.*`: the header and the meta
 * blocks, opened by the vault middleware when sealed), and the search itself (`admin.list.*`).
 */
interface CorePhases {
  coreStartMs: number;
  indexReadMs: number;
  searchInCoreMs: number;
}

/** The phases of the run that just ended (marks of the latest core start and listing). @throws Error when a mark is missing. */
async function corePhases(browser: ExtensionBrowser): Promise<CorePhases> {
  const { marks } = await offscreenTimeline(browser, 'admin.list.end');
  const span = (from: string, to: string) => {
    const a = marks[from];
    const b = marks[to];
    if (a === undefined || b === undefined) throw new Error(`no ${a === undefined ? from : to} mark in the offscreen document`);
    return b - a;
  };
  return {
    coreStartMs: span('core.start', 'core.ready'),
    indexReadMs: span('store.read.start', 'store.read.end'),
    searchInCoreMs: span('admin.list.start', 'admin.list.end'),
  };
}

interface SizeResult {
  memories: number;
  seedSeconds: number;
  disableSeconds: number;
  restartOn: Record<keyof Steps, Summary>;
  relockOn: Record<'unlockMs' | 'searchMs' | 'unlockAndSearchMs', Summary>;
  restartOff: Record<'coreMs' | 'searchMs' | 'totalMs', Summary>;
  samples: { restartOn: Steps[]; relockOn: Steps[]; restartOff: Steps[] };
  /** Per case, the core's phases of each run (`CorePhases`). */
  phases: { restartOn: CorePhases[]; relockOn: CorePhases[]; restartOff: CorePhases[] };
  consoleErrors: string[];
}

const summaries = <K extends keyof Steps>(runs: Steps[], keys: K[]): Record<K, Summary> =>
  Object.fromEntries(keys.map((k) => [k, summarize(runs.map((r) => r[k]))])) as Record<K, Summary>;

async function measureSize(extensionDir: string, memories: number, params: VaultParams, log: (line: string) => void): Promise<SizeResult> {
  const profile = mkdtempSync(join(tmpdir(), 'recall-bench-vault-'));
  const proxy = await startCountingProxy();
  const browser = await launchExtension({ extensionDir, userDataDir: profile, proxyPort: proxy.port });
  try {
    const page = await browser.openPanel();
    await callCore(page, 'core.ensure');
    await settle(page);
    await callCore(page, 'vault.enable', { passphrase: PASSPHRASE });
    await waitForVaultIdle(page);
    const all = seedMemories(memories, { dimension: DIMENSION, embeddingModel: PACKAGED_EMBEDDING_MODEL });
    let started = performance.now();
    await seed(page, all, params.importBatch, log);
    await settle(page);
    const seedSeconds = (performance.now() - started) / 1000;
    const known = all[Math.floor(memories / 2)]!;
    const query = known.text
      .replace(/^User: /, '')
      .split('\n')[0]!
      .split(/\s+/)
      .slice(0, 6)
      .join(' ');
    const probe = { query, expectId: known.id };

    const phases: SizeResult['phases'] = { restartOn: [], relockOn: [], restartOff: [] };
    const restartOn: Steps[] = [];
    for (let run = 0; run < params.runs; run++) {
      await (await serviceWorker(browser, page)).evaluate('chrome.offscreen.closeDocument()');
      const steps = await timedSteps(page, { ensure: true, unlock: PASSPHRASE, ...probe });
      restartOn.push(steps);
      phases.restartOn.push(await corePhases(browser));
      log(
        `  ${memories}: lock on, restart ${run + 1}/${params.runs}: core ${steps.coreMs.toFixed(0)} ms, unlock ${steps.unlockMs.toFixed(0)} ms, unlock + search ${steps.unlockAndSearchMs.toFixed(0)} ms`,
      );
      await settle(page);
    }
    const relockOn: Steps[] = [];
    for (let run = 0; run < params.runs; run++) {
      await callCore(page, 'vault.lock');
      const steps = await timedSteps(page, { ensure: false, unlock: PASSPHRASE, ...probe });
      relockOn.push(steps);
      phases.relockOn.push(await corePhases(browser));
      log(
        `  ${memories}: lock on, lock → unlock ${run + 1}/${params.runs}: unlock ${steps.unlockMs.toFixed(0)} ms, unlock + search ${steps.unlockAndSearchMs.toFixed(0)} ms`,
      );
      await settle(page);
    }

    started = performance.now();
    await callCore(page, 'vault.disable', { passphrase: PASSPHRASE });
    const off = await waitForVaultIdle(page);
    if (off.enabled) throw new Error('the lock is still on after vault.disable');
    await settle(page);
    const disableSeconds = (performance.now() - started) / 1000;
    const restartOff: Steps[] = [];
    for (let run = 0; run < params.runs; run++) {
      await (await serviceWorker(browser, page)).evaluate('chrome.offscreen.closeDocument()');
      const steps = await timedSteps(page, { ensure: true, unlock: null, ...probe });
      restartOff.push(steps);
      phases.restartOff.push(await corePhases(browser));
      log(`  ${memories}: lock off, restart ${run + 1}/${params.runs}: core ${steps.coreMs.toFixed(0)} ms, first search ${steps.searchMs.toFixed(0)} ms`);
      await settle(page);
    }
    return {
      memories,
      seedSeconds,
      disableSeconds,
      restartOn: summaries(restartOn, ['coreMs', 'unlockMs', 'searchMs', 'unlockAndSearchMs', 'totalMs']),
      relockOn: summaries(relockOn, ['unlockMs', 'searchMs', 'unlockAndSearchMs']),
      restartOff: summaries(restartOff, ['coreMs', 'searchMs', 'totalMs']),
      samples: { restartOn, relockOn, restartOff },
      phases,
      consoleErrors: [...browser.console.errors],
    };
  } finally {
    await browser.close().catch(() => undefined);
    await proxy.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

const ms = (s: Summary) => `${formatMs(s.median)} / ${formatMs(s.p95)}`;
const label = (n: number) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));

export default defineBench<VaultParams>({
  name: 'vault',
  title: 'Vault lock: unlock + first answered retrieval in Chromium',
  method:
    "Real headless Chromium (Debian), the production build with the 384-d fixture embedder packaged (nothing downloaded). A fresh profile; the lock turned on (`vault.enable`) on the empty store, then N memories seeded through the core's own `memory.import` (texts of the retrieval generator, seeded random unit vectors), so every row and index block is written sealed. **Lock on, offscreen restart**: the service worker closes the offscreen document; the panel page sends `core.ensure` (the core starts locked), `vault.unlock` (key derivation, unwrap, store open) and one memory search (`memory.list` with `search`, six words of a known memory, which must be in the answer); timed in the page. **Lock on, lock → unlock**: `vault.lock`, then the unlock and the search in the same core. **Lock off**: the same store after `vault.disable` decrypted it in place, offscreen restart then the same search. After each run, the offscreen document's `recall:*` marks split the core's side: its start (`core.start` → `core.ready`; with the lock on this runs after the unlock, so the first search waits for it, while with the lock off it is inside \"core answers\"), of it the index read (header + meta blocks, opened by the vault middleware when sealed), and the search itself. Each run is followed by waiting for the core to settle.",
  quick: { sizes: [10_000], runs: 5, importBatch: 10_000 },
  full: { sizes: [10_000], runs: 9, importBatch: 10_000 },
  async run(defaults, ctx) {
    // `VAULT_SIZES=1000,10000 VAULT_RUNS=5`: measure only these.
    const env = process.env;
    const params: VaultParams = {
      ...defaults,
      ...(env.VAULT_SIZES ? { sizes: env.VAULT_SIZES.split(',').map(Number) } : {}),
      ...(env.VAULT_RUNS ? { runs: Number(env.VAULT_RUNS) } : {}),
    };
    const extensionDir = await buildWithPackagedEmbedder(env.VAULT_BUILD_DIR ?? (await ctx.buildDir()));
    const results: SizeResult[] = [];
    try {
      for (const n of params.sizes) {
        ctx.log(`vault: ${n} memories`);
        results.push(await measureSize(extensionDir, n, params, ctx.log));
      }
    } finally {
      rmSync(extensionDir, { recursive: true, force: true });
    }
    const headline: HeadlineRow[] = results.map((r) => ({
      what: `vault: unlock + first answered retrieval after an offscreen restart, ${label(r.memories)} memories (median)`,
      measured: `${formatMs(r.restartOn.unlockAndSearchMs.median)} ms`,
      reference: `target ≤ ${TARGET_MS} ms; lock off, first retrieval after the core answers: ${formatMs(r.restartOff.searchMs.median)} ms`,
      ratio: r.restartOn.unlockAndSearchMs.median / TARGET_MS,
    }));
    const errors = results.flatMap((r) => r.consoleErrors);
    return {
      tables: [
        {
          title: `Unlock and the first answered memory search, median / p95 of ${params.runs} runs (ms; p95 of fewer than 20 runs is the largest):`,
          columns: [
            'memories',
            'case',
            'core answers',
            'unlock answered',
            'first search after the unlock (or the core)',
            'unlock + first search',
            'total from the restart',
          ],
          rows: results.flatMap((r) => [
            [
              label(r.memories),
              'lock on, offscreen restart',
              ms(r.restartOn.coreMs),
              ms(r.restartOn.unlockMs),
              ms(r.restartOn.searchMs),
              ms(r.restartOn.unlockAndSearchMs),
              ms(r.restartOn.totalMs),
            ],
            [
              label(r.memories),
              'lock on, lock → unlock (same core)',
              '–',
              ms(r.relockOn.unlockMs),
              ms(r.relockOn.searchMs),
              ms(r.relockOn.unlockAndSearchMs),
              '–',
            ],
            [
              label(r.memories),
              'lock off (same store, decrypted), offscreen restart',
              ms(r.restartOff.coreMs),
              '–',
              ms(r.restartOff.searchMs),
              '–',
              ms(r.restartOff.totalMs),
            ],
          ]),
        },
        {
          title: `Inside the memory core, median / p95 of ${params.runs} runs (ms, offscreen marks): with the lock on the first search waits for the core's start after the unlock; with it off the core started before it answered:`,
          columns: ['memories', 'case', 'core start → ready', 'of it: index read (header + meta blocks)', 'the search (memory.list)'],
          rows: results.flatMap((r) =>
            (
              [
                ['lock on, offscreen restart', r.phases.restartOn],
                ['lock on, lock → unlock (same core)', r.phases.relockOn],
                ['lock off (same store, decrypted), offscreen restart', r.phases.restartOff],
              ] as const
            ).map(([name, runs]) => [
              label(r.memories),
              name,
              ms(summarize(runs.map((p) => p.coreStartMs))),
              ms(summarize(runs.map((p) => p.indexReadMs))),
              ms(summarize(runs.map((p) => p.searchInCoreMs))),
            ]),
          ),
        },
        {
          title: 'Seeding and turning the lock off (s):',
          columns: ['memories', 'seeding with the lock on (memory.import)', 'vault.disable (decrypt in place)'],
          rows: results.map((r) => [label(r.memories), r.seedSeconds.toFixed(1), r.disableSeconds.toFixed(1)]),
        },
      ],
      headline,
      notes: errors.length
        ? [
            `Console errors in the extension during the runs (${errors.length}): ${[...new Set(errors)]
              .slice(0, 5)
              .map((e) => `\`${e.slice(0, 160)}\``)
              .join('; ')}`,
          ]
        : [],
      raw: { results },
    };
  },
});
