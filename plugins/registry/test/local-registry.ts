// A real registry for tests: Debian's docker-registry (distribution 2.8) on a loopback port, which
// the engine trusts without TLS. With htpasswd it checks passwords itself; behind Caddy (the test
// image, on the host's network) a read-only user may pull but any write (PUT, POST, PATCH,
// DELETE) is refused, as a real access rule in front of a real registry.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcryptjs';
import Docker from 'dockerode';
import { freePort, waitFor } from '@berth/core/testing';

export const registryMissing = (): string | undefined =>
  spawnSync('docker-registry', ['--version']).status === 0 ? undefined : 'Debian docker-registry is not installed (apt-get install docker-registry)';

export interface LocalRegistry {
  /** host:port */
  url: string;
  /** Tags of a repository, as the registry lists them (no auth is asked of this reader: it runs as the writer). */
  tags(repository: string): Promise<string[]>;
  stop(): Promise<void>;
}

async function startRegistryProcess(dir: string, port: number, opts: { users?: Record<string, string>; deletion: boolean; host?: string; tls?: { cert: string; key: string } }): Promise<ChildProcess> {
  const host = opts.host ?? '127.0.0.1';
  const lines = [
    'version: 0.1',
    'log: { level: error }',
    `storage: { filesystem: { rootdirectory: ${path.join(dir, 'data')} }, delete: { enabled: ${opts.deletion} } }`,
    `http: { addr: ${host}:${port}${opts.tls ? `, tls: { certificate: ${opts.tls.cert}, key: ${opts.tls.key} }` : ''} }`,
  ];
  if (opts.users) {
    const htpasswd = Object.entries(opts.users)
      .map(([user, password]) => `${user}:${bcrypt.hashSync(password, 5)}`)
      .join('\n');
    await writeFile(path.join(dir, 'htpasswd'), htpasswd + '\n');
    lines.push(`auth: { htpasswd: { realm: berth-test, path: ${path.join(dir, 'htpasswd')} } }`);
  }
  await writeFile(path.join(dir, 'config.yml'), lines.join('\n') + '\n');
  const child = spawn('docker-registry', ['serve', path.join(dir, 'config.yml')], { stdio: 'ignore' });
  await waitFor(
    `registry on ${host}:${port}`,
    async () => {
      const res = await fetch(`http${opts.tls ? 's' : ''}://${host}:${port}/v2/`).catch((e: Error) =>
        opts.tls && /certificate|self.signed/i.test(String((e as { cause?: unknown }).cause ?? e)) ? 'tls' : undefined,
      );
      return res !== undefined;
    },
    { timeout: 20_000, interval: 100 },
  );
  return child;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A registry with its own htpasswd users; deletion enabled or not. */
export async function startLocalRegistry(users: Record<string, string>, opts: { deletion?: boolean } = {}): Promise<LocalRegistry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-registry-'));
  const port = await freePort();
  const child = await startRegistryProcess(dir, port, { users, deletion: opts.deletion ?? true });
  const [user, password] = Object.entries(users)[0]!;
  return {
    url: `127.0.0.1:${port}`,
    tags: async repository => {
      const res = await fetch(`http://127.0.0.1:${port}/v2/${repository}/tags/list`, { headers: { authorization: basic(user, password) } });
      if (res.status === 404) return [];
      return (((await res.json()) as { tags?: string[] | null }).tags ?? []).sort();
    },
    stop: async () => {
      child.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A registry with TLS (a self-signed certificate for `host`, answered as `ca`: what a node's engine
 * must trust in /etc/docker/certs.d/<host:port>/ca.crt) on an address other machines reach.
 */
export async function startTlsRegistry(host: string, users: Record<string, string>): Promise<LocalRegistry & { ca: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-registry-'));
  const port = await freePort();
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${host}`,
      '-addext',
      `subjectAltName=IP:${host}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ],
    { stdio: 'ignore' },
  );
  if (made.status !== 0) throw new Error('openssl could not make the registry certificate');
  const child = await startRegistryProcess(dir, port, { users, deletion: true, host, tls: { cert, key } });
  return {
    url: `${host}:${port}`,
    ca: readFileSync(cert, 'utf8'),
    tags: async () => [],
    stop: async () => {
      child.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A registry without auth of its own behind Caddy: `writer` may do anything, `reader` only GET and
 * HEAD (its writes answer 403).
 */
export async function startGuardedRegistry(writer: [string, string], reader: [string, string], caddyImage: string): Promise<LocalRegistry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-registry-'));
  const inner = await freePort();
  const port = await freePort();
  const child = await startRegistryProcess(dir, inner, { deletion: true });
  await writeFile(
    path.join(dir, 'Caddyfile'),
    [
      `{\n  admin off\n  auto_https off\n}`,
      `http://127.0.0.1:${port} {`,
      `  basicauth * {`,
      `    ${writer[0]} ${Buffer.from(bcrypt.hashSync(writer[1], 5)).toString('base64')}`,
      `    ${reader[0]} ${Buffer.from(bcrypt.hashSync(reader[1], 5)).toString('base64')}`,
      `  }`,
      `  @readOnlyWrites {`,
      `    method PUT POST PATCH DELETE`,
      `    vars {http.auth.user.id} ${reader[0]}`,
      `  }`,
      `  respond @readOnlyWrites "read-only user" 403`,
      `  reverse_proxy 127.0.0.1:${inner}`,
      `}`,
    ].join('\n') + '\n',
  );
  const docker = new Docker();
  const caddy = await docker.createContainer({
    Image: caddyImage,
    Labels: { 'berth-test': 'registry-guard' },
    HostConfig: { NetworkMode: 'host', Binds: [`${path.join(dir, 'Caddyfile')}:/etc/caddy/Caddyfile:ro`], AutoRemove: false },
  });
  await caddy.start();
  await waitFor(
    `caddy on 127.0.0.1:${port}`,
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v2/`).catch(() => undefined);
      return res?.status === 401;
    },
    { timeout: 30_000, interval: 200 },
  );
  return {
    url: `127.0.0.1:${port}`,
    tags: async repository => {
      const res = await fetch(`http://127.0.0.1:${inner}/v2/${repository}/tags/list`);
      if (res.status === 404) return [];
      return (((await res.json()) as { tags?: string[] | null }).tags ?? []).sort();
    },
    stop: async () => {
      await caddy.remove({ force: true }).catch(() => undefined);
      child.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
