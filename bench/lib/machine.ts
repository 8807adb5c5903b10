/**
 * The machine a benchmark ran on, for the BENCHMARKS.md header.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';

/** Description of the benchmark machine. */
export interface MachineInfo {
  cpuModel: string;
  /** Logical cores Node sees. */
  cores: number;
  /** Total memory, bytes. */
  memoryBytes: number;
  os: string;
  node: string;
  /** `chromium --version` output, or `null` when the binary is missing. */
  chromium: string | null;
  /** 1-minute load average when the run started (the machine may be shared). */
  loadAverage: number;
}

/** Reads the machine's description; `chromiumPath` defaults to `CHROMIUM_PATH` or `/usr/bin/chromium`. */
export function machineInfo(chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'): MachineInfo {
  let chromium: string | null = null;
  try {
    chromium = execFileSync(chromiumPath, ['--version'], { encoding: 'utf8', timeout: 20_000 }).trim();
  } catch {
    chromium = null;
  }
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryBytes: totalmem(),
    os: `${osType()} ${release()}`,
    node: process.version,
    chromium,
    loadAverage: loadavg()[0] ?? 0,
  };
}
