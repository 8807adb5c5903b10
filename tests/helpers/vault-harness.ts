/**
 * The vault lock over the whole core in Node (fake-indexeddb, the real job queue, long-term store
 * and fixture embedder of `core-harness.ts`): a controller (`createVaultController`) whose cores
 * are started like `startTestCore`'s, and a raw scan of a database opened WITHOUT the vault
 * middleware (plain Dexie over the same IndexedDB), to see what a reader of the profile folder sees.
 */
import Dexie from 'dexie';
import { nodeVoyWasm } from '../../bench/data/node-voy';
import { createCore, type Core, type CoreDeps } from '../../src/core/index';
import { createVaultController, type VaultController, type VaultDeps } from '../../src/core/vault';
import { RecallDB } from '../../src/db/schema';
import type { ChatEngine, Embedder } from '../../src/engines/types';
import type { VaultStatus } from '../../src/model/vault';
import { testEngineManager } from './core-harness';

/** A cheap Argon2id for tests (m = 1 MiB, t = 1); the default cost is measured by the bench. */
export const TEST_KDF_COST = { m: 1024, t: 1 } as const;

/** A vault controller over `db`, its cores, and every status it broadcast. */
export interface TestVault {
  vault: VaultController;
  db: RecallDB;
  events: VaultStatus[];
  /** Every core it started, in order. */
  cores: Core[];
  /** Stops the running core (if any); for the end of a test. */
  stop(): Promise<void>;
}

/** Starts a controller over `db` (a fresh database by default: a restart passes the old one's name). */
export function startTestVault(options: {
  chat: () => ChatEngine | null;
  embedder: () => Embedder | null;
  dbName?: string;
  passBatchSize?: number;
  /** The auto-lock timer (see `VaultDeps.timers`). */
  timers?: VaultDeps['timers'];
  /** More dependencies of each core (e.g. `fileRoot`, the fake OPFS). */
  extra?: Partial<CoreDeps>;
  /** Called with each status as it is broadcast (synchronously, e.g. to "kill" the core mid-pass). */
  onStatus?: (status: VaultStatus, db: RecallDB) => void;
}): TestVault {
  const db = new RecallDB(options.dbName ?? `vault-${crypto.randomUUID()}`);
  const engines = testEngineManager(options);
  const events: VaultStatus[] = [];
  const cores: Core[] = [];
  const vault = createVaultController({
    db,
    kdfCost: TEST_KDF_COST,
    ...(options.extra?.eraseUserFiles ? { eraseUserFiles: options.extra.eraseUserFiles } : {}),
    ...(options.passBatchSize ? { passBatchSize: options.passBatchSize } : {}),
    ...(options.timers ? { timers: options.timers } : {}),
    onStatus: (status) => {
      events.push(status);
      options.onStatus?.(status, db);
    },
    startCore: async () => {
      const core = await createCore({
        db,
        engines,
        loadVoyWasm: async () => (await nodeVoyWasm()) as Uint8Array<ArrayBuffer>,
        events: { chatDelta: () => undefined, jobs: () => undefined },
        ...options.extra,
      });
      cores.push(core);
      return core;
    },
  });
  return {
    vault,
    db,
    events,
    cores,
    async stop() {
      if (!vault.isLocked()) {
        const core = await vault.core().catch(() => null);
        await core?.stop();
      }
    },
  };
}

/** Every raw value of every table of database `name`, read without the vault middleware. */
export async function rawRows(name: string): Promise<Record<string, unknown[]>> {
  const plain = new Dexie(name);
  await plain.open();
  try {
    const out: Record<string, unknown[]> = {};
    for (const table of plain.tables) out[table.name] = await table.toArray();
    return out;
  } finally {
    plain.close();
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * Every place `needle` appears in `rows`: strings (random UUIDs masked: one can contain "4711"; numbers are not read),
 * object keys, and typed arrays / ArrayBuffers read as UTF-8 text. Returns paths like `memories[0].text`.
 */
export function findInRaw(rows: Record<string, unknown[]>, needles: string[]): string[] {
  const found: string[] = [];
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const check = (text: string, path: string) => {
    const masked = text.replace(UUID, '<uuid>');
    for (const needle of needles) if (masked.includes(needle)) found.push(`${path} ∋ ${needle}`);
  };
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string') return check(value, path);
    // Numbers are not scanned: the secrets are texts, and a millisecond timestamp (`runAfter`,
    // `createdAt`) contains "4711" by chance at some times of day (the suite failed on that).
    if (typeof value === 'number') return;
    if (value instanceof ArrayBuffer) return check(decoder.decode(new Uint8Array(value)), path);
    if (ArrayBuffer.isView(value)) return check(decoder.decode(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)), path);
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${path}[${i}]`));
    if (typeof value === 'object' && value !== null) {
      for (const [key, v] of Object.entries(value)) {
        check(key, `${path}.{key}`);
        walk(v, `${path}.${key}`);
      }
    }
  };
  for (const [table, values] of Object.entries(rows)) values.forEach((v, i) => walk(v, `${table}[${i}]`));
  return found;
}
