// The caddy proxy provider. Its own configuration is a directory on this host
// (<dataDir>/proxy/caddy): one JSON file per workload (workloads/<appName>.json, what the domains
// plugin applied), uploaded certificates (certificates/<path>/), Caddy's storage (data/: the
// certificates it obtained) and caddy.json, the whole config generated from them. Caddy runs as
// a Swarm service with that directory bind-mounted and `caddy run --config caddy.json`, so a
// restart serves the same routes; every change is loaded through Caddy's admin API (`caddy
// reload` inside the container: the admin endpoint listens only there, never on the host).
// The proxy of a server (forServer) keeps the same files here, under proxy/servers/<serverId>/caddy,
// and writes what Caddy reads (caddy.json, the CA root, uploaded certificates) to its directory on
// that server, which its service there bind-mounts; Caddy's storage stays on the server.
import { X509Certificate } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ProxyCertificate, ProxyCertificateState, ProxyEngine, ProxyFileRole, ProxyProvider, ProxyServerHost, ProxyServiceSettings, ProxyWorkloadConfig } from '@berth/core';
import { caddyConfig } from './caddy-config.ts';
import {
  assertFileAppName,
  ensureProxyService,
  execIn,
  proxyServiceSpec,
  readServiceSettings,
  runningContainer,
  Serial,
  ServerFiles,
  writeAtomic,
  writeServiceSettings,
} from '@berth/provider-proxy-service';

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
  readonly composeRouting = 'alias';
  readonly configDir: string;
  readonly #options: CaddyOptions;
  readonly #host: CaddyHost;
  #engine: ProxyEngine | null = null;
  readonly #serial = new Serial();
  /** The server's directory, for the proxy of a server; null on this machine. */
  readonly #server: ServerFiles | null;

  constructor(options: CaddyOptions, host: CaddyHost, server?: ProxyServerHost) {
    this.#options = options;
    this.#host = host;
    this.#server = server ? new ServerFiles(server, 'caddy') : null;
    this.configDir = server ? path.join(host.dataDir, 'proxy', 'servers', server.serverId, 'caddy') : path.join(host.dataDir, 'proxy', 'caddy');
  }

  forServer(server: ProxyServerHost): ProxyProvider {
    return new CaddyProxy(this.#options, this.#host, server);
  }

  /** The directory the service bind-mounts, on the machine it runs on. */
  #hostDir(): Promise<string> {
    return this.#server ? this.#server.dir() : Promise.resolve(this.configDir);
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
      const bundle = `${c.certificateData.trim()}\n${c.privateKey.trim()}\n`;
      await writeFile(path.join(dir, 'bundle.pem'), bundle, { mode: 0o600 });
      await this.#server?.write(path.posix.join('certificates', safeName(c.certificatePath), 'bundle.pem'), bundle);
      await this.#writeConfig();
      if (this.#engine) await this.#load(10_000);
    });
  }

  removeCertificate(certificatePath: string): Promise<void> {
    return this.#serial.run(async () => {
      await rm(path.join(this.configDir, 'certificates', safeName(certificatePath)), { recursive: true, force: true });
      await this.#server?.remove(path.posix.join('certificates', safeName(certificatePath)));
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
    const root = path.posix.join('data', 'caddy', 'certificates');
    for (const issuer of await this.#list(root)) {
      const pem = await this.#read(path.posix.join(root, issuer, host, `${host}.crt`));
      if (pem === null) continue;
      const cert = new X509Certificate(pem);
      const notAfter = new Date(cert.validTo);
      if (notAfter.getTime() > Date.now()) return { state: 'valid', issuer: cert.issuer.replace(/\n/g, ', '), notAfter: notAfter.toISOString(), reason: null };
      return { state: 'failed', issuer: cert.issuer.replace(/\n/g, ', '), notAfter: notAfter.toISOString(), reason: `The certificate expired on ${notAfter.toISOString()} and was not renewed` };
    }
    const error = await this.#lastError(host);
    if (error) return { state: 'failed', issuer: null, notAfter: null, reason: `Caddy could not obtain a certificate for ${host}: ${error}` };
    return { state: 'pending', issuer: null, notAfter: null, reason: `Caddy has no certificate for ${host} yet; it obtains one when the host first answers` };
  }

  /** The root of Caddy's internal CA ("local"), made when a route first needs its issuer. */
  ownCaRoot(): Promise<string | null> {
    return this.#read(path.posix.join('data', 'caddy', 'pki', 'authorities', 'local', 'root.crt'));
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

  async #spec() {
    const dir = await this.#hostDir();
    return proxyServiceSpec(this.configDir, { ...this.#host, name: this.#options.serviceName }, () => ({
      args: ['caddy', 'run', '--config', `${IN}/caddy.json`],
      env: ['XDG_DATA_HOME=/data', 'XDG_CONFIG_HOME=/config'],
      binds: [
        { source: dir, target: IN },
        { source: path.posix.join(dir, 'data'), target: '/data' },
      ],
    }));
  }

  /** A file of the directory Caddy runs with (on the server, for a server's proxy); null when absent. */
  async #read(relative: string): Promise<string | null> {
    if (this.#server) return this.#server.read(relative);
    const file = path.join(this.configDir, relative);
    return existsSync(file) ? readFile(file, 'utf8') : null;
  }

  async #list(relative: string): Promise<string[]> {
    if (this.#server) return this.#server.list(relative);
    const dir = path.join(this.configDir, relative);
    return existsSync(dir) ? readdir(dir) : [];
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
    await this.#server?.mkdir('data', 'certificates');
    const trustedRoots: string[] = [];
    if (this.#options.acmeCaRoot) {
      const root = await readFile(this.#options.acmeCaRoot, 'utf8');
      await writeFile(path.join(this.configDir, 'acme-ca.pem'), root, { mode: 0o644 });
      await this.#server?.write('acme-ca.pem', root, '644');
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
    await this.#server?.write('caddy.json', await readFile(path.join(this.configDir, 'caddy.json'), 'utf8'));
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
