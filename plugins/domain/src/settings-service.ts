// The settings.* proxy operations. The Traefik-named ones need the traefik provider (400 naming
// the active one otherwise). Every file read and write is confined to the provider's config
// directory: no ".." segment, no symbolic link leading out of it (real paths compared), and
// never the directories that hold private keys (uploaded certificates, the proxy's storage).
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { badRequest, forbidden, invalidField, type Cradle, type EntityManager, type Principal, type ProxyFileRole, type ProxyProvider, type ProxyServiceSettings } from '@berth/core';
import type { WorkloadRef } from '@berth/plugin-workloads';
import type { ProxyRouting } from './routing.ts';
import type { WorkloadOwners } from './workload-owner.ts';

const KEY_DIRS = ['certificates', 'data'];

export interface DirectoryEntry {
  id: string;
  name: string;
  type: 'file' | 'directory';
  children?: DirectoryEntry[];
}

export class ProxySettings {
  readonly #routing: ProxyRouting;
  readonly #owners: WorkloadOwners;
  readonly #cradle: () => Cradle;

  constructor(deps: { routing: ProxyRouting; owners: WorkloadOwners; cradle: () => Cradle }) {
    this.#routing = deps.routing;
    this.#owners = deps.owners;
    this.#cradle = deps.cradle;
  }

  /** The proxy belongs to the whole instance: only an organization's owner changes it. */
  assertOwner(principal: Principal): void {
    if (principal.role !== 'owner') throw forbidden('Only the owner may read or change the proxy\'s configuration');
  }

  /** The absolute path of a file inside the config directory, or 400 naming `field`. */
  confined(provider: ProxyProvider, given: string, field = 'path'): string {
    const root = realpathSync(provider.configDir);
    if (given.split(/[\\/]/).includes('..')) throw invalidField(field, 'no ".." segments');
    const full = path.isAbsolute(given) ? path.resolve(given) : path.resolve(root, given);
    const rel = path.relative(root, full);
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) throw invalidField(field, `must name a file inside the proxy's configuration directory ${root}`);
    if (KEY_DIRS.includes(rel.split(path.sep)[0]!)) throw invalidField(field, `${rel.split(path.sep)[0]}/ holds private keys and is not served`);
    // The deepest part that exists, resolved: a symbolic link may not lead out.
    let probe = full;
    while (!existsSync(probe)) probe = path.dirname(probe);
    const real = realpathSync(probe);
    if (real !== root && !real.startsWith(root + path.sep)) throw invalidField(field, 'leads outside the proxy\'s configuration directory');
    return full;
  }

  async readFile(given: string): Promise<string> {
    const provider = this.#routing.traefik();
    const file = this.confined(provider, given);
    if (!existsSync(file)) throw badRequest(`path: ${given} does not exist in the proxy's configuration`);
    return readFile(file, 'utf8');
  }

  async writeFile(given: string, text: string, field = 'traefikConfig'): Promise<boolean> {
    const provider = this.#routing.traefik();
    const file = this.confined(provider, given);
    try {
      provider.validateFile(path.relative(realpathSync(provider.configDir), file), text);
    } catch (e) {
      throw invalidField(field, `not valid: ${(e as Error).message}`);
    }
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(`${file}.tmp`, text, { mode: 0o600 });
    await rename(`${file}.tmp`, file);
    return true;
  }

  #roleFile(role: ProxyFileRole): string {
    const provider = this.#routing.traefik();
    const rel = provider.fileOf(role);
    if (!rel) throw badRequest(`The ${provider.id} proxy has no ${role} file`);
    return rel;
  }

  async readRole(role: ProxyFileRole): Promise<string> {
    const rel = this.#roleFile(role);
    // The static config and the shared middlewares exist once the proxy was prepared.
    await this.#routing.traefik().prepare?.();
    return this.readFile(rel);
  }

  writeRole(role: ProxyFileRole, text: string): Promise<boolean> {
    return this.writeFile(this.#roleFile(role), text);
  }

  /** The caller's application (application.readTraefikConfig): the kind whose id field is applicationId. */
  application(applicationId: string, organizationId: string, em: EntityManager): Promise<WorkloadRef> {
    return this.#owners.fromInput({ applicationId }, organizationId, em);
  }

  /** A workload's own file (application.readTraefikConfig). */
  async readWorkload(appName: string): Promise<string | null> {
    const provider = this.#routing.traefik();
    const rel = provider.workloadFile(appName);
    const file = rel ? this.confined(provider, rel) : null;
    return file && existsSync(file) ? readFile(file, 'utf8') : null;
  }

  writeWorkload(appName: string, text: string): Promise<boolean> {
    const provider = this.#routing.traefik();
    const rel = provider.workloadFile(appName);
    if (!rel) throw badRequest(`The ${provider.id} proxy keeps no file per workload`);
    return this.writeFile(rel, text);
  }

  /** The config directory as a tree (without the private-key directories). */
  async directories(): Promise<DirectoryEntry[]> {
    const provider = this.#routing.traefik();
    const root = realpathSync(provider.configDir);
    const walk = async (dir: string): Promise<DirectoryEntry[]> => {
      const out: DirectoryEntry[] = [];
      for (const d of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
        const full = path.join(dir, d.name);
        if (dir === root && KEY_DIRS.includes(d.name)) continue;
        if (d.isDirectory()) out.push({ id: full, name: d.name, type: 'directory', children: await walk(full) });
        else if (d.isFile()) out.push({ id: full, name: d.name, type: 'file' });
      }
      return out;
    };
    return walk(root);
  }

  async serviceSettings(): Promise<ProxyServiceSettings> {
    return this.#routing.traefik().serviceSettings();
  }

  async updateServiceSettings(patch: Partial<ProxyServiceSettings>): Promise<boolean> {
    const provider = this.#routing.traefik();
    await provider.updateServiceSettings(patch, await this.#routing.engine());
    return true;
  }

  async reload(): Promise<boolean> {
    const provider = this.#routing.traefik();
    await provider.reload(await this.#routing.engine());
    return true;
  }

  /** What the proxy and domains of this server run with. */
  webServerSettings() {
    const { config } = this.#cradle();
    const provider = this.#routing.provider();
    return {
      proxy: provider?.id ?? 'none',
      serverIp: config.serverIp ?? null,
      httpPort: config.proxyHttpPort,
      httpsPort: config.proxyHttpsPort,
      generatedDomainBase: config.generatedDomainBase,
      configDir: provider?.configDir ?? null,
    };
  }
}
