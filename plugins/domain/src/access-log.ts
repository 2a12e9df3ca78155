// The proxy's access log, the peer's "Requests": whether the proxy writes one, turning it on or
// off, and trimming it (the cleanup plugin's log cleanup calls trim on its schedule). Traefik writes
// it once its static configuration (traefik.yml) names a file, as the peer's does: the file lies in
// the provider's configuration directory, which the proxy sees at /etc/dokploy/traefik. A change of
// traefik.yml applies when the proxy restarts (settings.reloadTraefik), as the peer's. Another
// proxy (Caddy) keeps no access log here, and Berth answers so, as the peer does where it has no
// Traefik configuration to change.
import { realpathSync } from 'node:fs';
import { open, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { ProxyProvider } from '@berth/core';
import { KIND_LABEL } from '@berth/plugin-hosts';
import type { ProxyRouting } from './routing.ts';
import type { ProxySettings } from './settings-service.ts';

/** The configuration directory as the proxy sees it (the peer's layout, which the traefik provider keeps). */
const PROXY_DIR = '/etc/dokploy/traefik';
/** The peer's accessLog section. */
const ACCESS_LOG = { filePath: `${PROXY_DIR}/dynamic/access.log`, format: 'json', bufferingSize: 100 };
const CHUNK = 64 * 1024;

type Main = { accessLog?: { filePath?: unknown } } & Record<string, unknown>;

/** The last `keep` lines of a file (read from its end: an access log may be large). */
async function lastLines(file: string, keep: number): Promise<{ text: string; size: number }> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    let position = size;
    let tail = Buffer.alloc(0);
    const newlines = () => tail.reduce((n, b) => n + (b === 10 ? 1 : 0), 0);
    // One newline more than the lines kept: the one that ends the line before them.
    while (position > 0 && newlines() <= keep) {
      const length = Math.min(CHUNK, position);
      position -= length;
      const chunk = Buffer.alloc(length);
      await handle.read(chunk, 0, length, position);
      tail = Buffer.concat([chunk, tail]);
    }
    let text = tail.toString('utf8');
    const ends = text.endsWith('\n');
    const parts = (ends ? text.slice(0, -1) : text).split('\n');
    if (parts.length > keep) text = `${parts.slice(-keep).join('\n')}${ends ? '\n' : ''}`;
    return { text, size };
  } finally {
    await handle.close();
  }
}

export class AccessLog {
  readonly #routing: ProxyRouting;
  readonly #settings: ProxySettings;

  constructor(o: { routing: ProxyRouting; settings: ProxySettings }) {
    this.#routing = o.routing;
    this.#settings = o.settings;
  }

  /** This machine's proxy when its configuration is Traefik's; null for another proxy or none. */
  #traefik(): ProxyProvider | null {
    const provider = this.#routing.provider();
    return provider?.traefikFiles ? provider : null;
  }

  async #main(): Promise<Main | null> {
    if (!this.#traefik()) return null;
    const parsed = parse(await this.#settings.readRole('main')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Main) : {};
  }

  /** Whether the proxy's configuration names an access log file (haveActivateRequests). */
  async active(): Promise<boolean> {
    const filePath = (await this.#main())?.accessLog?.filePath;
    return typeof filePath === 'string' && filePath !== '';
  }

  /** Names (or removes) the peer's access log in traefik.yml; false when the proxy has no Traefik configuration to change. */
  async toggle(enable: boolean): Promise<boolean> {
    const main = await this.#main();
    if (!main) return false;
    if (enable) main.accessLog = { ...ACCESS_LOG };
    else delete main.accessLog;
    return this.#settings.writeRole('main', stringify(main));
  }

  /** The access log on this machine: the file traefik.yml names, when it lies in the configuration directory; null otherwise. */
  async file(): Promise<string | null> {
    const provider = this.#traefik();
    const filePath = (await this.#main())?.accessLog?.filePath;
    if (!provider || typeof filePath !== 'string' || !filePath.startsWith(`${PROXY_DIR}/`)) return null;
    // Confined as every file of the settings operations (no ".." out of the directory).
    return this.#settings.confined(provider, path.posix.relative(PROXY_DIR, filePath));
  }

  /**
   * Keeps the access log's last `keep` lines (the rest is removed), then has the proxy reopen it:
   * Traefik writes on to the file it holds open until it gets SIGUSR1. Answers the file and the
   * bytes removed; no file (none named, none written yet): nothing to do.
   */
  async trim(keep: number): Promise<{ file: string | null; removedBytes: number }> {
    const file = await this.file();
    if (!file || !(await stat(file).catch(() => null))) return { file, removedBytes: 0 };
    const { text, size } = await lastLines(file, keep);
    const removedBytes = size - Buffer.byteLength(text);
    if (removedBytes <= 0) return { file, removedBytes: 0 };
    await writeFile(`${file}.tmp`, text, { mode: 0o644 });
    await rename(`${file}.tmp`, file);
    await this.#reopen(realpathSync(this.#traefik()!.configDir));
    return { file, removedBytes };
  }

  /** SIGUSR1 to the proxy containers on this machine that mount this configuration directory. */
  async #reopen(configDir: string): Promise<void> {
    const { docker } = await this.#routing.engine();
    const containers = await docker.listContainers({ filters: JSON.stringify({ label: [`${KIND_LABEL}=proxy`], status: ['running'] }) });
    for (const c of containers.filter(c => c.Mounts?.some(m => m.Source === configDir && m.Destination === PROXY_DIR))) await docker.getContainer(c.Id).kill({ signal: 'SIGUSR1' });
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The proxy's access log (the peer's Requests); from the domain plugin. */
    accessLog: AccessLog;
  }
}
