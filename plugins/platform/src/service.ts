// Berth's version and whether a newer release exists. The version is the product's (package.json
// at the root of Berth's tree; each package keeps its own). Releases are read from the operator's
// feed (releaseFeedUrl) only: none is configured by default, and then nothing is asked.
import { readFileSync } from 'node:fs';
import type { Logger } from '@berth/core';
import type { UpdateData } from './schemas.ts';

/** What the feed may list: "1.2.3" or "v1.2.3"; pre-releases ("1.3.0-rc.1") and build metadata are not releases. */
const RELEASE = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})$/;
const FEED_TIMEOUT_MS = 10_000;
const FEED_MAX_BYTES = 4 << 20;

/** The running Berth's version. */
export const berthVersion = (): string => (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The numbers of a release version, or null for anything else. */
export function releaseOf(version: string): [number, number, number] | null {
  const m = RELEASE.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** Negative, zero or positive as a is older than, the same as or newer than b. */
export function compareReleases(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** The versions a feed answer lists: an array of version strings, or of GitHub releases (tag_name; drafts and pre-releases skipped). */
export function feedVersions(body: unknown): string[] {
  if (!Array.isArray(body)) throw new Error('the feed does not answer a JSON array');
  return body.flatMap(entry => {
    if (typeof entry === 'string') return [entry];
    if (entry && typeof entry === 'object') {
      const r = entry as { tag_name?: unknown; draft?: unknown; prerelease?: unknown };
      if (typeof r.tag_name === 'string' && r.draft !== true && r.prerelease !== true) return [r.tag_name];
    }
    return [];
  });
}

export class ReleaseCheck {
  readonly #feedUrl: () => string | undefined;
  readonly #log: Logger;
  readonly version: string;

  constructor(o: { feedUrl: () => string | undefined; logger: Logger; version?: string }) {
    this.#feedUrl = o.feedUrl;
    this.#log = o.logger;
    this.version = o.version ?? berthVersion();
  }

  /** The running version compared with the newest release of the feed (no feed: no update, nothing asked). */
  async check(): Promise<UpdateData> {
    const currentVersion = this.version;
    const url = this.#feedUrl();
    if (!url) return { latestVersion: currentVersion, updateAvailable: false, currentVersion, message: 'No release feed is configured (releaseFeedUrl, BERTH_RELEASE_FEED_URL): nothing was asked' };
    let listed: string[];
    try {
      listed = feedVersions(await this.#read(url));
    } catch (e) {
      const reason = (e as Error).message;
      this.#log.warn({ url, reason }, 'the release feed could not be read');
      return { latestVersion: null, updateAvailable: false, currentVersion, message: `The release feed ${url} could not be read: ${reason}` };
    }
    const releases = listed.map(v => ({ v: v.trim(), n: releaseOf(v) })).filter((r): r is { v: string; n: [number, number, number] } => r.n !== null);
    const newest = releases.sort((a, b) => compareReleases(b.n, a.n))[0];
    if (!newest) return { latestVersion: null, updateAvailable: false, currentVersion, message: `The release feed ${url} lists no release (x.y.z)` };
    const running = releaseOf(currentVersion);
    const updateAvailable = running !== null && compareReleases(newest.n, running) > 0;
    return {
      latestVersion: newest.v,
      updateAvailable,
      currentVersion,
      message: updateAvailable ? `Release ${newest.v} is newer than the running ${currentVersion}` : `The newest release the feed lists is ${newest.v}; the running ${currentVersion} is up to date`,
    };
  }

  async #read(url: string): Promise<unknown> {
    const res = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'follow', signal: AbortSignal.timeout(FEED_TIMEOUT_MS) }).catch((e: Error) => {
      throw new Error((e.cause as Error | undefined)?.message ?? e.message);
    });
    if (!res.ok) throw new Error(`it answered HTTP ${res.status}`);
    const text = await res.text();
    if (text.length > FEED_MAX_BYTES) throw new Error(`its answer is larger than ${FEED_MAX_BYTES} bytes`);
    try {
      return JSON.parse(text);
    } catch {
      throw new Error('its answer is not JSON');
    }
  }
}
