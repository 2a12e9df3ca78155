// The caddy proxy provider. Its own configuration is a directory on this host
// (<dataDir>/proxy/caddy): one JSON file per workload (workloads/<appName>.json, what the domains
// plugin applied), uploaded certificates (certificates/<path>/), Caddy's storage (data/: the
// certificates it obtained) and caddy.json, the whole config generated from them. Caddy runs as
// a Swarm service with that directory bind-mounted and `caddy run --config caddy.json`, so a
// restart serves the same routes; every change is loaded through Caddy's admin API (`caddy
// reload` inside the container: the admin endpoint listens only there, never on the host).
import { X509Certificate } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ProxyCertificate, ProxyCertificateState, ProxyEngine, ProxyFileRole, ProxyProvider, ProxyServiceSettings, ProxyWorkloadConfig } from '@berth/core';
import { caddyConfig } from './caddy-config.ts';
import { assertFileAppName, ensureProxyService, execIn, proxyServiceSpec, readServiceSettings, runningContainer, Serial, writeAtomic, writeServiceSettings } from '@berth/provider-proxy-service';

export interface CaddyOptions {
  /** The Swarm service name of the proxy. */
  serviceName: string;
  /** The ACME directory for letsencrypt domains. */
  acmeCa: string;
  acmeEmail?: string;
  /** A PEM file on this host trusted for the ACME server's TLS (a private or test CA such as pebble). */
  acmeCaRoot?: string;
}

export interface CaddyHost {
  dataDir: string;
  image: string;
  httpPort: number;
  httpsPort: number;
}

const IN = '/etc/berth-proxy';
const ADMIN = 'localhost:2019';
const WEB_SERVER = path.join('workloads', '_berth.json');

export class CaddyProxy implements ProxyProvider {
  readonly id = 'caddy';
  readonly traefikFiles = false;
  readonly configDir: string;
  readonly #options: CaddyOptions;
  readonly #host: CaddyHost;
  #engine: ProxyEngine | null = null;
  readonly #serial = new Serial();

  constructor(options: CaddyOptions, host: CaddyHost) {
    this.#options = options;
    this.#host = host;
    this.configDir = path.join(host.dataDir, 'proxy', 'caddy');
  }

  async ensure(engine: ProxyEngine): Promise<void> {
    this.#engine = engine;
    await this.#serial.run(async () => {
      await this.#writeConfig();
      const changed = await ensureProxyService(engine, await this.#spec());
      await this.#load(changed ? 30_000 : 10_000);
    });
  }

  applyWorkload(config: ProxyWorkloadConfig): Promise<void> {
    return this.#serial.run(async () => {
      await this.#writeJson(this.#workloadPath(config.appName), config);
      await this.#writeConfig();
      if (this.#engine) await this.#load(10_000);
    });
  }

  removeWorkload(appName: string): Promise<void> {
    return this.#serial.run(async () => {
      await rm(path.join(this.configDir, this.#workloadPath(appName)), { force: true });
      await this.#writeConfig();
      if (this.#engine) await this.#load(10_000);
    });
  }

  applyWebServer(config: ProxyWorkloadConfig | null): Promise<void> {
    return this.#serial.run(async () => {
      // Not a valid appName (it starts with "_"): no workload's file can be this one.
      if (config) await this.#writeJson(WEB_SERVER, config);
      else await rm(path.join(this.configDir, WEB_SERVER), { force: true });
      await this.#writeConfig();
      if (this.#engine) await this.#load(10_000);
    });
  }

  writeCertificate(c: ProxyCertificate): Promise<void> {
    return this.#serial.run(async () => {
      const dir = path.join(this.configDir, 'certificates', safeName(c.certificatePath));
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // load_folders takes any .pem holding both the chain and the key.
      await writeFile(path.join(dir, 'bundle.pem'), `${c.certificateData.trim()}\n${c.privateKey.trim()}\n`, { mode: 0o600 });
      await this.#writeConfig();
      if (this.#engine) await this.#load(10_000);
    });
  }

  removeCertificate(certificatePath: string): Promise<void> {
    return this.#serial.run(async () => {
      await rm(path.join(this.configDir, 'certificates', safeName(certificatePath)), { recursive: true, force: true });
      await this.#writeConfig();
      if (this.#engine) await this.#load(10_000);
    });
  }

  async reload(engine: ProxyEngine): Promise<void> {
    this.#engine = engine;
    await this.#serial.run(async () => {
      await this.#writeConfig();
      await ensureProxyService(engine, await this.#spec(), true);
      await this.#load(30_000);
    });
  }

  async certificateState(host: string, https: boolean): Promise<ProxyCertificateState> {
    if (!https) return { state: 'none', issuer: null, notAfter: null, reason: null };
    const root = path.join(this.configDir, 'data', 'caddy', 'certificates');
    const issuers = existsSync(root) ? await readdir(root) : [];
    for (const issuer of issuers) {
      const file = path.join(root, issuer, host, `${host}.crt`);
      if (!existsSync(file)) continue;
      const cert = new X509Certificate(await readFile(file));
      const notAfter = new Date(cert.validTo);
      if (notAfter.getTime() > Date.now()) return { state: 'valid', issuer: cert.issuer.replace(/\n/g, ', '), notAfter: notAfter.toISOString(), reason: null };
      return { state: 'failed', issuer: cert.issuer.replace(/\n/g, ', '), notAfter: notAfter.toISOString(), reason: `The certificate expired on ${notAfter.toISOString()} and was not renewed` };
    }
    const error = await this.#lastError(host);
    if (error) return { state: 'failed', issuer: null, notAfter: null, reason: `Caddy could not obtain a certificate for ${host}: ${error}` };
    return { state: 'pending', issuer: null, notAfter: null, reason: `Caddy has no certificate for ${host} yet; it obtains one when the host first answers` };
  }

  fileOf(_role: ProxyFileRole): string | null {
    return null;
  }

  workloadFile(appName: string): string | null {
    return this.#workloadPath(appName);
  }

  validateFile(_relativePath: string, text: string): void {
    JSON.parse(text);
  }

  serviceSettings(): Promise<ProxyServiceSettings> {
    return readServiceSettings(this.configDir);
  }

  async updateServiceSettings(patch: Partial<ProxyServiceSettings>, engine: ProxyEngine): Promise<void> {
    this.#engine = engine;
    await this.#serial.run(async () => {
      // Caddy has no dashboard: the setting is kept but changes nothing.
      await writeServiceSettings(this.configDir, patch);
      await ensureProxyService(engine, await this.#spec());
      await this.#load(30_000);
    });
  }

  // ------------------------------------------------------------ internals
  #workloadPath(appName: string): string {
    assertFileAppName(appName);
    return path.join('workloads', `${appName}.json`);
  }

  #spec() {
    return proxyServiceSpec(this.configDir, { ...this.#host, name: this.#options.serviceName }, () => ({
      args: ['caddy', 'run', '--config', `${IN}/caddy.json`],
      env: ['XDG_DATA_HOME=/data', 'XDG_CONFIG_HOME=/config'],
      binds: [
        { source: this.configDir, target: IN },
        { source: path.join(this.configDir, 'data'), target: '/data' },
      ],
    }));
  }

  async #writeJson(relative: string, value: unknown): Promise<void> {
    await writeAtomic(path.join(this.configDir, relative), `${JSON.stringify(value, null, 2)}\n`);
  }

  async #workloads(): Promise<ProxyWorkloadConfig[]> {
    const dir = path.join(this.configDir, 'workloads');
    if (!existsSync(dir)) return [];
    const out: ProxyWorkloadConfig[] = [];
    for (const f of (await readdir(dir)).filter(f => f.endsWith('.json')).sort()) out.push(JSON.parse(await readFile(path.join(dir, f), 'utf8')) as ProxyWorkloadConfig);
    return out;
  }

  async #writeConfig(): Promise<void> {
    await mkdir(path.join(this.configDir, 'data'), { recursive: true, mode: 0o700 });
    const trustedRoots: string[] = [];
    if (this.#options.acmeCaRoot) {
      await writeFile(path.join(this.configDir, 'acme-ca.pem'), await readFile(this.#options.acmeCaRoot), { mode: 0o644 });
      trustedRoots.push(`${IN}/acme-ca.pem`);
    }
    const certsDir = path.join(this.configDir, 'certificates');
    const hasCertificates = existsSync(certsDir) && (await readdir(certsDir)).length > 0;
    await this.#writeJson(
      'caddy.json',
      caddyConfig({
        workloads: await this.#workloads(),
        acme: { ca: this.#options.acmeCa, email: this.#options.acmeEmail ?? null, trustedRoots },
        certificatesDir: `${IN}/certificates`,
        hasCertificates,
        adminListen: ADMIN,
      }),
    );
  }

  /** Has the running Caddy load caddy.json, retrying while it starts. */
  async #load(deadlineMs: number): Promise<void> {
    const engine = this.#engine!;
    const until = Date.now() + deadlineMs;
    for (;;) {
      try {
        const container = await runningContainer(engine.docker, this.#options.serviceName, Math.max(until - Date.now(), 0));
        await execIn(container, ['caddy', 'reload', '--config', `${IN}/caddy.json`, '--address', ADMIN, '--force']);
        return;
      } catch (e) {
        if (Date.now() > until) throw new Error(`The proxy did not take its configuration: ${(e as Error).message}`);
        await new Promise(r => setTimeout(r, 250));
      }
    }
  }

  /** Caddy's last logged error about obtaining a certificate for the host. */
  async #lastError(host: string): Promise<string | null> {
    if (!this.#engine) return null;
    const container = await runningContainer(this.#engine.docker, this.#options.serviceName, 1000).catch(() => null);
    if (!container) return null;
    const raw = (await container.logs({ stdout: true, stderr: true, tail: 500 })) as Buffer;
    let found: string | null = null;
    for (const line of raw.toString('utf8').split('\n')) {
      const at = line.indexOf('{');
      if (at < 0) continue;
      try {
        const entry = JSON.parse(line.slice(at)) as { level?: string; identifier?: string; error?: string; msg?: string };
        if (entry.level === 'error' && entry.identifier === host) found = entry.error ?? entry.msg ?? null;
        if (entry.identifier === host && /certificate obtained successfully/.test(entry.msg ?? '')) found = null;
      } catch {
        /* not a JSON log line */
      }
    }
    return found;
  }
}

function safeName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name) || name.includes('..')) throw new Error(`"${name}" is not a valid certificate path`);
  return name;
}
