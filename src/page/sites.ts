/**
 * Which pages Recall may read (pure): browser pages, the Web Store and other non-web URLs can
 * never be read (`unreadableReason`), and the user's list of sites never to read
 * (`Settings.blockedSites`) is matched before any script runs in the tab (`blockingPattern`).
 *
 * A site pattern is a host, optionally with a port and a path prefix, written without a scheme:
 * `example.com` (the host and all its subdomains, any port), `*.example.com` (the same; the `*.`
 * is dropped), `127.0.0.1:8080` (that port only), `example.com/private` (paths starting with
 * `/private` on that host and its subdomains). Hosts compare case-insensitively; paths
 * case-sensitively, as URLs do.
 */
import { PageError } from '../model/errors';

/** URL schemes whose pages can be read; everything else (chrome:, chrome-extension:, about:, view-source:, data:, …) cannot. */
export const READABLE_SCHEMES = ['http:', 'https:', 'file:'] as const;

/** Pages extensions may not script although they are on the web (the Chrome Web Store). */
const STORE_PAGES: readonly { host: string; path: string }[] = [
  { host: 'chromewebstore.google.com', path: '/' },
  { host: 'chrome.google.com', path: '/webstore' },
];

/** Why a URL can never be read (`'browser'`: not a web page; `'store'`: the Web Store), or `null` when it can be tried. */
export function unreadableReason(url: string): 'browser' | 'store' | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'browser';
  }
  if (!(READABLE_SCHEMES as readonly string[]).includes(parsed.protocol)) return 'browser';
  const host = parsed.hostname.toLowerCase();
  if (STORE_PAGES.some((s) => host === s.host && parsed.pathname.startsWith(s.path))) return 'store';
  return null;
}

/** A parsed site pattern. */
interface SitePattern {
  host: string;
  /** Port as written, or `null` for any port. */
  port: string | null;
  /** Path prefix, `/` for the whole site. */
  path: string;
}

/**
 * The pattern the user typed, normalized (`Example.COM/Private/` → `example.com/Private/`; a
 * scheme and a leading `*.` are dropped; a trailing `/` alone is dropped), or `null` when it is
 * no host (empty, spaces inside, an invalid host).
 */
export function normalizeSitePattern(input: string): string | null {
  const parsed = parsePattern(input);
  if (!parsed) return null;
  return `${parsed.host}${parsed.port ? `:${parsed.port}` : ''}${parsed.path === '/' ? '' : parsed.path}`;
}

function parsePattern(input: string): SitePattern | null {
  let text = input.trim();
  if (!text || /\s/.test(text)) return null;
  text = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^\*\./, '');
  let url: URL;
  try {
    url = new URL(`http://${text}`);
  } catch {
    return null;
  }
  if (!url.hostname || url.username || url.password) return null;
  const explicitPort = /^[^/]*:(\d+)/.exec(text)?.[1] ?? null;
  return { host: url.hostname.toLowerCase(), port: explicitPort, path: url.pathname || '/' };
}

/**
 * The first of `patterns` that covers `url` (as stored: normalized or not), or `null`. A URL that
 * cannot be parsed is covered by nothing (and is unreadable anyway, `unreadableReason`).
 */
export function blockingPattern(url: string, patterns: readonly string[]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const host = parsed.hostname.toLowerCase();
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '');
  for (const raw of patterns) {
    const p = parsePattern(raw);
    if (!p) continue;
    const hostMatches = host === p.host || host.endsWith(`.${p.host}`);
    const portMatches = p.port === null || p.port === port;
    const pathMatches =
      p.path === '/' || parsed.pathname === p.path.replace(/\/$/, '') || parsed.pathname.startsWith(p.path.endsWith('/') ? p.path : `${p.path}/`);
    if (hostMatches && portMatches && pathMatches) return raw;
  }
  return null;
}

/**
 * Throws unless `url` may be read: not a browser page or the Web Store, not on `blocked`.
 * Called before any script runs in the tab.
 * @throws PageError `unreadable` (params `host`), `blocked` (params `host`, `pattern`).
 */
export function assertReadable(url: string, blocked: readonly string[]): void {
  const reason = unreadableReason(url);
  const host = hostOf(url);
  if (reason)
    throw new PageError('unreadable', `Recall cannot read ${reason === 'store' ? 'the Chrome Web Store' : 'this kind of page'} (${host || url.slice(0, 40)})`, {
      params: { host },
    });
  const pattern = blockingPattern(url, blocked);
  if (pattern !== null) throw new PageError('blocked', `${host} is on the list of sites never to read (${pattern})`, { params: { host, pattern } });
}

/** The host of `url` (lower case), or '' when it has none. */
export function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}
