/**
 * The built package (`.output/chrome-mv3`, built by `wxt build` before the e2e suite) runs no
 * remote code: no file holds a code-CDN URL, the CSP allows scripts from the package only, and
 * the host permissions name no code host. Runs over the files on disk, no browser needed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODE_CDN_HOSTS, findCodeCdnUrls } from '../../scripts/build/no-remote-code';
import { BUILD_DIR } from './harness';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the built package', () => {
  it('exists (run `npx wxt build` first)', () => {
    expect(existsSync(join(BUILD_DIR, 'manifest.json'))).toBe(true);
  });

  it('contains no URL of a code CDN in any file (JS, HTML, JSON, WASM)', () => {
    const files = filesUnder(BUILD_DIR);
    expect(files.length).toBeGreaterThan(10);
    const hits = files.flatMap((file) =>
      // latin1 keeps every byte, so URLs inside WebAssembly data segments are found too
      findCodeCdnUrls(readFileSync(file).toString('latin1')).map((h) => `${relative(BUILD_DIR, file)}: ${h.url}\n    …${h.context.replace(/\s+/g, ' ')}…`),
    );
    expect(hits, `code-CDN URLs in the package:\n${hits.join('\n')}`).toEqual([]);
  });

  it('the manifest allows scripts from the package only and grants no code host', () => {
    const manifest = JSON.parse(readFileSync(join(BUILD_DIR, 'manifest.json'), 'utf8')) as {
      host_permissions?: string[];
      content_security_policy?: { extension_pages?: string };
      content_scripts?: unknown[];
    };
    const csp = manifest.content_security_policy?.extension_pages ?? '';
    const scriptSrc = /script-src ([^;]*)/.exec(csp)?.[1]?.trim().split(/\s+/) ?? [];
    // Exactly the package and WebAssembly compilation of packaged modules: no host, no eval, no wildcard.
    expect(scriptSrc.sort()).toEqual(["'self'", "'wasm-unsafe-eval'"]);
    expect(csp).not.toMatch(/https?:|\*|'unsafe-eval'|'unsafe-inline'/);
    // Model weights and tokenizers come from Hugging Face (data, not code); nothing else.
    const hosts = manifest.host_permissions ?? [];
    expect(hosts).not.toContain('<all_urls>');
    for (const pattern of hosts) {
      expect(pattern).toMatch(/^https:\/\/(\*\.)?(huggingface\.co|hf\.co)\/\*$/);
      expect(CODE_CDN_HOSTS.some((h) => pattern.includes(h))).toBe(false);
    }
    // WebLLM's model libraries (WebAssembly) are never fetched from GitHub at run time.
    expect(hosts.join(' ')).not.toContain('raw.githubusercontent.com');
    expect(manifest.content_scripts ?? []).toEqual([]);
  });
});
