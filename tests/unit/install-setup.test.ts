import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import semver from 'semver';

/**
 * `npm ci` on the README's Node must install without warnings: every locked package accepts the
 * Node range the project declares (`engines.node`), and every package with an install script has
 * an explicit `allowScripts` decision (npm 11.19+ skips and lists undecided ones).
 */
interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  hasInstallScript?: boolean;
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string }; allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
const deps = Object.entries(lock.packages).filter(([path]) => path !== '');
/** The package name of a lockfile path: the part after the last `node_modules/`. */
const nameOf = (path: string): string => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install setup', () => {
  it('every locked package accepts the lowest Node the project declares', () => {
    const lowest = semver.minVersion(pkg.engines.node);
    expect(lowest?.version).toBe('20.19.0');
    const refused = deps
      .filter(([, entry]) => {
        const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
        return range !== undefined && !semver.satisfies(lowest!, range);
      })
      .map(([path, entry]) => `${nameOf(path)}@${entry.version}`);
    expect(refused).toEqual([]);
  });

  it('every package with an install script has an allowScripts decision; onnxruntime-node is denied', () => {
    const withScripts = [...new Set(deps.filter(([, entry]) => entry.hasInstallScript).map(([path]) => nameOf(path)))];
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((name) => pkg.allowScripts?.[name] === undefined)).toEqual([]);
    // Its script only downloads the CUDA execution provider (unreachable offline; the CPU binaries ship in the package).
    expect(pkg.allowScripts?.['onnxruntime-node']).toBe(false);
  });
});
