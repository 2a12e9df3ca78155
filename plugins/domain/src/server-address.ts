// This server's public address (serverIp), which the domain plugin owns: the configuration's
// (BERTH_SERVER_IP) until settings.updateServerIp stores another (dataDir/proxy/server-ip.json,
// kept across restarts). Every reader (generated domains, the preflight, server.publicIp, the
// monitoring setup) takes config.serverIp, so the stored address is put there at boot and on
// each change; '' takes the stored one away and the configured one applies again.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { invalidField, type BerthConfig } from '@berth/core';
import { localRouteAddress } from '@berth/plugin-hosts';

export class ServerAddress {
  readonly #config: BerthConfig;
  readonly #configured: string | undefined;
  readonly #file: string;

  constructor(config: BerthConfig) {
    this.#config = config;
    this.#configured = config.serverIp;
    this.#file = path.join(config.dataDir, 'proxy', 'server-ip.json');
    const stored = existsSync(this.#file) ? (JSON.parse(readFileSync(this.#file, 'utf8')) as { serverIp?: string }).serverIp : undefined;
    if (stored) config.serverIp = stored;
  }

  /** serverIp when one is set, else the address of the default route's interface ('' when there is none). */
  async current(): Promise<string> {
    return this.#config.serverIp || (await localRouteAddress());
  }

  /** Stores the address (an IPv4 or IPv6 address), or with '' forgets the stored one. */
  async set(serverIp: string): Promise<void> {
    const given = serverIp.trim();
    if (given && !isIP(given)) throw invalidField('serverIp', `"${given.slice(0, 64)}" is not an IPv4 or IPv6 address ('' returns to the configured one)`);
    if (!given) {
      await rm(this.#file, { force: true });
      this.#config.serverIp = this.#configured;
      return;
    }
    await mkdir(path.dirname(this.#file), { recursive: true, mode: 0o700 });
    await writeFile(`${this.#file}.tmp`, JSON.stringify({ serverIp: given }), { mode: 0o600 });
    await rename(`${this.#file}.tmp`, this.#file);
    this.#config.serverIp = given;
  }
}
