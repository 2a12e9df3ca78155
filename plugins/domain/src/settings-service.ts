// The settings.* proxy operations. The Traefik-named ones need the traefik provider (400 naming
// the active one otherwise). Every file read and write is confined to the provider's config
// directory: no ".." segment, no symbolic link leading out of it (real paths compared), and
// never the directories that hold private keys (uploaded certificates, the proxy's storage).
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { badRequest, invalidField, type EntityManager, type Principal, type ProxyFileRole, type ProxyProvider, type ProxyServiceSettings } from '@berth/core';
import type { WorkloadRef } from '@berth/plugin-workloads';
import { asciiHost } from './routing.ts';
import { ProxyBound } from './proxy-bound.ts';
import { assertOwnRoutes } from './own-routes.ts';

const KEY_DIRS = ['certificates', 'data'];

export interface OwnDomain {
  host: string | null;
  https?: boolean;
  certificateType: 'letsencrypt' | 'none' | 'custom';
  letsEncryptEmail?: string | null;
}

export interface WebServerSettings {
  proxy: string;
  serverIp: string | null;
  httpPort: number;
  httpsPort: number;
  generatedDomainBase: string;
  configDir: string | null;
  host: string | null;
  https: boolean;
  certificateType: 'letsencrypt' | 'none' | 'custom';
  letsEncryptEmail: string | null;
}

async function writeAtomicFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(`${file}.tmp`, text, { mode: 0o600 });
  await rename(`${file}.tmp`, file);
}

export interface DirectoryEntry {
  id: string;
  name: string;
  type: 'file' | 'directory';
  children?: DirectoryEntry[];
}

export class ProxySettings extends ProxyBound {
  /**
   * For an operation that names a server (this machine's proxy is its operators', the transport
   * checks that): the organization's server (else 404), and a proxy there that keeps Traefik's
   * files. None does (the traefik provider runs only on this machine; a server's proxy is Caddy's):
   * 400 naming serverId, rather than acting on this machine's.
   */
  async refuseServer(principal: Principal, serverId: string | undefined): Promise<void> {
    if (!serverId) return;
    await this.cradle().workloads.assertServer(serverId, principal.organizationId);
    const provider = this.routing.traefik();
    throw invalidField(
      'serverId',
      `Berth keeps the ${provider.id} proxy's files on this machine only: server ${serverId} has no proxy whose Traefik files it could read or write (leave serverId out for this machine's proxy)`,
    );
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
    if (real !== root && !real.startsWith(root + path.sep)) throw invalidField(field, "leads outside the proxy's configuration directory");
    return full;
  }

  async readFile(given: string): Promise<string> {
    const provider = this.routing.traefik();
    const file = this.confined(provider, given);
    if (!existsSync(file)) throw badRequest(`path: ${given} does not exist in the proxy's configuration`);
    return readFile(file, 'utf8');
  }

  async writeFile(given: string, text: string, field = 'traefikConfig'): Promise<boolean> {
    const provider = this.routing.traefik();
    const file = this.confined(provider, given);
    try {
      provider.validateFile(path.relative(realpathSync(provider.configDir), file), text);
    } catch (e) {
      throw invalidField(field, `not valid: ${(e as Error).message}`);
    }
    await writeAtomicFile(file, text);
    return true;
  }

  #roleFile(role: ProxyFileRole): string {
    const provider = this.routing.traefik();
    const rel = provider.fileOf(role);
    if (!rel) throw badRequest(`The ${provider.id} proxy has no ${role} file`);
    return rel;
  }

  async readRole(role: ProxyFileRole): Promise<string> {
    const rel = this.#roleFile(role);
    // The static config and the shared middlewares exist once the proxy was prepared.
    await this.routing.traefik().prepare?.();
    return this.readFile(rel);
  }

  writeRole(role: ProxyFileRole, text: string): Promise<boolean> {
    return this.writeFile(this.#roleFile(role), text);
  }

  /** The caller's application (application.readTraefikConfig): the kind whose id field is applicationId. */
  application(applicationId: string, organizationId: string, em: EntityManager): Promise<WorkloadRef> {
    return this.owners.fromInput({ applicationId }, organizationId, em);
  }

  /** A workload's own file (application.readTraefikConfig). */
  async readWorkload(appName: string): Promise<string | null> {
    const provider = this.routing.traefik();
    const rel = provider.workloadFile(appName);
    const file = rel ? this.confined(provider, rel) : null;
    return file && existsSync(file) ? readFile(file, 'utf8') : null;
  }

  /** A workload's own file, held to routing only its own domains to itself (own-routes.ts) first. */
  async writeOwnWorkload(workload: WorkloadRef, text: string, em: EntityManager): Promise<boolean> {
    const { routes } = await this.routing.configOf(workload, em);
    assertOwnRoutes(text, { appName: workload.appName, hosts: routes.map(r => r.host), upstreams: routes.flatMap(r => (r.upstream ? [r.upstream] : [])) });
    return this.writeWorkload(workload.appName, text);
  }

  writeWorkload(appName: string, text: string): Promise<boolean> {
    const provider = this.routing.traefik();
    const rel = provider.workloadFile(appName);
    if (!rel) throw badRequest(`The ${provider.id} proxy keeps no file per workload`);
    return this.writeFile(rel, text);
  }

  /** The config directory as a tree (without the private-key directories). */
  async directories(): Promise<DirectoryEntry[]> {
    const provider = this.routing.traefik();
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
    return this.routing.traefik().serviceSettings();
  }

  async updateServiceSettings(patch: Partial<ProxyServiceSettings>): Promise<boolean> {
    const provider = this.routing.traefik();
    await this.routing.apply('take the new settings', async () => provider.updateServiceSettings(patch, await this.routing.engine()));
    return true;
  }

  async reload(): Promise<boolean> {
    const provider = this.routing.traefik();
    await this.routing.apply('reload', async () => provider.reload(await this.routing.engine()));
    return true;
  }

  /** What the proxy and domains of this server run with, and Berth's own domain. */
  async webServerSettings(): Promise<WebServerSettings> {
    const { config } = this.cradle();
    const provider = this.routing.provider();
    const own = existsSync(this.#webServerFile()) ? (JSON.parse(await readFile(this.#webServerFile(), 'utf8')) as OwnDomain) : null;
    return {
      proxy: provider?.id ?? 'none',
      serverIp: config.serverIp ?? null,
      httpPort: config.proxyHttpPort,
      httpsPort: config.proxyHttpsPort,
      generatedDomainBase: config.generatedDomainBase,
      configDir: provider?.configDir ?? null,
      host: own?.host ?? null,
      https: own?.https ?? false,
      certificateType: own?.certificateType ?? 'none',
      letsEncryptEmail: own?.letsEncryptEmail ?? null,
    };
  }

  #webServerFile(): string {
    return path.join(this.cradle().config.dataDir, 'proxy', 'web-server.json');
  }

  /**
   * Serves Berth's own API at a domain through the proxy: the proxy reaches Berth on this host
   * through the gateway of the engine's docker_gwbridge network (Berth must listen there: host
   * 0.0.0.0). An empty host takes the domain away.
   */
  async assignDomainServer(own: OwnDomain, listenPort: number): Promise<WebServerSettings> {
    const provider = await this.routing.ensure();
    if (!provider) throw badRequest("No proxy is configured (BERTH_PROXY=none): nothing can serve Berth's domain");
    const host = own.host ? asciiHost(own.host) : '';
    if (own.host && !host) throw invalidField('host', `"${own.host}" is not a host name`);
    const https = own.https ?? own.certificateType !== 'none';
    if (host) {
      const docker = await this.cradle().hosts.local();
      const bridge = (await docker
        .getNetwork('docker_gwbridge')
        .inspect()
        .catch(() => null)) as { IPAM?: { Config?: { Gateway?: string }[] } } | null;
      const gateway = bridge?.IPAM?.Config?.find(c => c.Gateway)?.Gateway;
      if (!gateway) throw badRequest('The engine has no docker_gwbridge gateway: the proxy cannot reach Berth on this host');
      await this.routing.apply("serve Berth's domain", () =>
        provider.applyWebServer({
          appName: 'berth',
          routes: [
            {
              domainId: 'berth',
              uniqueConfigKey: 0,
              host,
              path: '/',
              internalPath: '/',
              stripPath: false,
              https,
              certificateType: own.certificateType,
              customCertResolver: null,
              port: listenPort,
              serviceName: null,
              customEntrypoint: null,
              middlewares: [],
              upstream: `${gateway}:${listenPort}`,
            },
          ],
          redirects: [],
          basicAuth: [],
        }),
      );
    } else {
      await this.routing.apply("take Berth's domain away", () => provider.applyWebServer(null));
    }
    await writeAtomicFile(this.#webServerFile(), JSON.stringify({ host: host || null, https, certificateType: own.certificateType, letsEncryptEmail: own.letsEncryptEmail ?? null }));
    return this.webServerSettings();
  }
}
