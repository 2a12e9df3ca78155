// The traefik proxy provider. Its directory (<dataDir>/proxy/traefik) has the peer's layout of
// /etc/dokploy/traefik, and is mounted there in the container: traefik.yml (static, mounted as
// /etc/traefik/traefik.yml), dynamic/ (watched by Traefik's file provider): middlewares.yml,
// <appName>.yml per workload, berth.yml (Berth's own web server), acme.json, certificates/<path>/.
// Traefik picks up file changes by itself: applying a workload only writes files.
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { ProxyCertificate, ProxyCertificateState, ProxyEngine, ProxyFileRole, ProxyProvider, ProxyServiceSettings, ProxyWorkloadConfig } from '@berth/core';
import { assertFileAppName, ensureProxyService, proxyServiceSpec, readServiceSettings, Serial, writeAtomic, writeServiceSettings } from '@berth/provider-proxy-service';
import { certificateFile, mainConfig, mergeMiddlewares, workloadFile, type FileConfig, type UpstreamHost } from './traefik-files.ts';

export interface TraefikOptions {
  serviceName: string;
  acmeEmail: string;
  acmeCa?: string;
  upstreamHost: UpstreamHost;
}

export interface TraefikHost {
  dataDir: string;
  image: string;
  httpPort: number;
  httpsPort: number;
  network: string;
}

/** Where the peer keeps it, inside the container. */
export const TRAEFIK_DIR = '/etc/dokploy/traefik';

export class TraefikProxy implements ProxyProvider {
  readonly id = 'traefik';
  readonly traefikFiles = true;
  readonly composeRouting = 'labels';
  readonly configDir: string;
  readonly #options: TraefikOptions;
  readonly #host: TraefikHost;
  readonly #serial = new Serial();

  constructor(options: TraefikOptions, host: TraefikHost) {
    this.#options = options;
    this.#host = host;
    this.configDir = path.join(host.dataDir, 'proxy', 'traefik');
  }

  #path(...parts: string[]): string {
    return path.join(this.configDir, ...parts);
  }

  async #readYaml(file: string): Promise<FileConfig | null> {
    return existsSync(file) ? (parse(await readFile(file, 'utf8')) as FileConfig | null) : null;
  }

  /** The static config and the shared middlewares, written once: an operator's edits are kept. */
  async prepare(): Promise<void> {
    if (!existsSync(this.#path('traefik.yml'))) {
      await writeAtomic(
        this.#path('traefik.yml'),
        stringify(mainConfig({ dynamicDir: `${TRAEFIK_DIR}/dynamic`, network: this.#host.network, acmeEmail: this.#options.acmeEmail, acmeCa: this.#options.acmeCa ?? null })),
        0o644,
      );
    }
    if (!existsSync(this.#path('dynamic', 'middlewares.yml'))) {
      await writeAtomic(this.#path('dynamic', 'middlewares.yml'), stringify(mergeMiddlewares(null, { appName: '', routes: [] })));
    }
  }

  async ensure(engine: ProxyEngine): Promise<void> {
    await this.#serial.run(async () => {
      await this.prepare();
      await ensureProxyService(engine, await this.#spec());
    });
  }

  applyWorkload(config: ProxyWorkloadConfig): Promise<void> {
    return this.#serial.run(async () => {
      await this.prepare();
      const file = this.#workloadPath(config.appName);
      const content = workloadFile(config, this.#options.upstreamHost);
      // Middlewares first: a router never names one that does not exist yet.
      const middlewares = this.#path('dynamic', 'middlewares.yml');
      await writeAtomic(middlewares, stringify(mergeMiddlewares(await this.#readYaml(middlewares), config)));
      if (content) await writeAtomic(this.#path(file), stringify(content));
      else await rm(this.#path(file), { force: true });
    });
  }

  removeWorkload(appName: string): Promise<void> {
    return this.applyWorkload({ appName, routes: [], redirects: [], basicAuth: [] });
  }

  /** Berth's own web server in dynamic/berth.yml (the peer's dokploy.yml), its middlewares in the shared file. */
  applyWebServer(config: ProxyWorkloadConfig | null): Promise<void> {
    return this.#serial.run(async () => {
      await this.prepare();
      const w = config ?? { appName: 'berth', routes: [], redirects: [], basicAuth: [] };
      const middlewares = this.#path('dynamic', 'middlewares.yml');
      await writeAtomic(middlewares, stringify(mergeMiddlewares(await this.#readYaml(middlewares), w)));
      const content = workloadFile(w, this.#options.upstreamHost);
      const file = this.#path(this.fileOf('webServer')!);
      if (content) await writeAtomic(file, stringify(content));
      else await rm(file, { force: true });
    });
  }

  writeCertificate(c: ProxyCertificate): Promise<void> {
    return this.#serial.run(async () => {
      const rel = path.join('dynamic', 'certificates', safeName(c.certificatePath));
      await writeAtomic(this.#path(rel, 'chain.crt'), `${c.certificateData.trim()}\n`);
      await writeAtomic(this.#path(rel, 'privkey.key'), `${c.privateKey.trim()}\n`);
      await writeAtomic(this.#path(rel, 'certificate.yml'), stringify(certificateFile(`${TRAEFIK_DIR}/${rel}`)));
    });
  }

  removeCertificate(certificatePath: string): Promise<void> {
    return this.#serial.run(() => rm(this.#path('dynamic', 'certificates', safeName(certificatePath)), { recursive: true, force: true }));
  }

  async reload(engine: ProxyEngine): Promise<void> {
    await this.#serial.run(async () => {
      await this.prepare();
      await ensureProxyService(engine, await this.#spec(), true);
    });
  }

  /** From Traefik's ACME storage (acme.json): the certificate it holds for the host. */
  async certificateState(host: string, https: boolean): Promise<ProxyCertificateState> {
    if (!https) return { state: 'none', issuer: null, notAfter: null, reason: null };
    const file = this.#path('dynamic', 'acme.json');
    const store = existsSync(file)
      ? (JSON.parse((await readFile(file, 'utf8')) || '{}') as Record<string, { Certificates?: { domain?: { main?: string; sans?: string[] }; certificate?: string }[] | null }>)
      : {};
    for (const resolver of Object.values(store)) {
      for (const c of resolver?.Certificates ?? []) {
        if (c.domain?.main !== host && !c.domain?.sans?.includes(host)) continue;
        const cert = new X509Certificate(Buffer.from(c.certificate ?? '', 'base64'));
        const notAfter = new Date(cert.validTo);
        return notAfter.getTime() > Date.now()
          ? { state: 'valid', issuer: cert.issuer.replace(/\n/g, ', '), notAfter: notAfter.toISOString(), reason: null }
          : {
              state: 'failed',
              issuer: cert.issuer.replace(/\n/g, ', '),
              notAfter: notAfter.toISOString(),
              reason: `The certificate expired on ${notAfter.toISOString()} and Traefik did not renew it: read the proxy's log`,
            };
      }
    }
    return {
      state: 'pending',
      issuer: null,
      notAfter: null,
      reason: `Traefik's ACME storage has no certificate for ${host} (a letsencrypt domain gets one once the host resolves here and port 80 answers; others use Traefik's default certificate)`,
    };
  }

  fileOf(role: ProxyFileRole): string | null {
    return { main: 'traefik.yml', webServer: path.join('dynamic', 'berth.yml'), middlewares: path.join('dynamic', 'middlewares.yml') }[role];
  }

  workloadFile(appName: string): string | null {
    return this.#workloadPath(appName);
  }

  validateFile(_relativePath: string, text: string): void {
    parse(text, { strict: true, uniqueKeys: true });
  }

  serviceSettings(): Promise<ProxyServiceSettings> {
    return readServiceSettings(this.configDir);
  }

  async updateServiceSettings(patch: Partial<ProxyServiceSettings>, engine: ProxyEngine): Promise<void> {
    await this.#serial.run(async () => {
      await writeServiceSettings(this.configDir, patch);
      await this.prepare();
      await ensureProxyService(engine, await this.#spec());
    });
  }

  #workloadPath(appName: string): string {
    assertFileAppName(appName);
    if (appName === 'berth') throw new Error('The appName "berth" names Berth\'s own web-server file (dynamic/berth.yml) under the traefik proxy: choose another appName');
    return path.join('dynamic', `${appName}.yml`);
  }

  /** The service as the peer runs Traefik: the static config at /etc/traefik/traefik.yml, the directory at /etc/dokploy/traefik, the engine's socket for its swarm and docker providers. */
  #spec() {
    return proxyServiceSpec(this.configDir, { ...this.#host, name: this.#options.serviceName }, settings => ({
      args: [],
      binds: [
        { source: this.#path('traefik.yml'), target: '/etc/traefik/traefik.yml', readOnly: true },
        { source: this.configDir, target: TRAEFIK_DIR },
        { source: '/var/run/docker.sock', target: '/var/run/docker.sock', readOnly: true },
      ],
      ports: settings.dashboard ? [{ target: 8080, published: 8080 }] : [],
    }));
  }
}

function safeName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name) || name.includes('..')) throw new Error(`"${name}" is not a valid certificate path`);
  return name;
}
