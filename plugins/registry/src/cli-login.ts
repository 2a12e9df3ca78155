// A CLI login for one program run, where a program needs one (the Compose program, `docker stack
// deploy --with-registry-auth`): the Docker CLI has no per-call credentials, so `docker login
// --password-stdin` (the password on standard input, never on a command line) writes them into a
// private DOCKER_CONFIG directory made for this run on Berth's machine; the program runs with it,
// then each registry is logged out and the directory removed. Nothing is written in ~/.docker or
// /etc/docker of this machine or of any node, and the password never appears in an error.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RegistryCredentials } from './check.ts';

export interface CliLoginIo {
  /** The engine the program drives (a server's forwarded socket); absent: this machine's. */
  dockerHost?: string;
  signal?: AbortSignal;
  log(line: string): void;
}

/** The logins of one run: the program gets `env`; `close` logs out and removes the directory (call it in a finally). */
export interface CliLogins {
  env: { DOCKER_CONFIG: string };
  /** The registries logged in to (host[:port], "Docker Hub"). */
  registries: string[];
  close(): Promise<void>;
}

/** The registry host of an image reference ("" for Docker Hub), and its first path component after it. */
export function registryOfImage(image: string): { host: string; namespace: string } {
  const parts = image.split('/');
  const first = parts[0] ?? '';
  const hasHost = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = hasHost ? first.toLowerCase() : '';
  const rest = hasHost ? parts.slice(1) : parts;
  return { host: host === 'docker.io' || host === 'index.docker.io' ? '' : host, namespace: rest.length > 1 ? rest[0]!.toLowerCase() : '' };
}

/**
 * The registries the images come from, one per host (the oldest that matches): a registry matches
 * an image on its host; a Docker Hub one (registryUrl "") only an image in its own namespace (its
 * image prefix's first component, or its user name).
 */
export function registriesForImages<R extends RegistryCredentials>(registries: R[], images: string[]): R[] {
  const chosen = new Map<string, R>();
  for (const image of images) {
    const { host, namespace } = registryOfImage(image);
    const match = registries.find(r =>
      r.registryUrl ? r.registryUrl.toLowerCase() === host : !host && namespace !== '' && namespace === ((r.imagePrefix ?? '').split('/')[0] || r.username).toLowerCase(),
    );
    if (match && !chosen.has(host)) chosen.set(host, match);
  }
  return [...chosen.values()];
}

/** Logs in to each registry in a fresh DOCKER_CONFIG directory; on a failure, what was made is removed and the error names the registry (the password replaced by ***). */
export async function cliLogin(registries: RegistryCredentials[], io: CliLoginIo): Promise<CliLogins> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-docker-config-'));
  // The CLI's plugins (compose) are looked up in DOCKER_CONFIG too: the usual ones stay reachable.
  const plugins = path.join(process.env.DOCKER_CONFIG ?? path.join(os.homedir(), '.docker'), 'cli-plugins');
  if (existsSync(plugins)) await symlink(plugins, path.join(dir, 'cli-plugins'));
  const env = { DOCKER_CONFIG: dir };
  const done: string[] = [];
  const close = async () => {
    for (const server of done) await docker(['logout', ...(server ? [server] : [])], env, io).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const r of registries) {
      const where = r.registryUrl || 'Docker Hub';
      try {
        await docker(['login', '--username', r.username, '--password-stdin', ...(r.registryUrl ? [r.registryUrl] : [])], env, io, r.password);
      } catch (e) {
        throw new Error(`Login to ${where} failed: ${(e as Error).message.split(r.password).join('***')}`);
      }
      done.push(r.registryUrl);
      io.log(`Logged in to ${where} for this run`);
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { env, registries: registries.map(r => r.registryUrl || 'Docker Hub'), close };
}

/** Runs the Docker CLI with the run's DOCKER_CONFIG (and DOCKER_HOST), `input` on its standard input. */
function docker(args: string[], env: { DOCKER_CONFIG: string }, io: CliLoginIo, input = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, {
      env: {
        PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
        HOME: env.DOCKER_CONFIG,
        ...env,
        ...(io.dockerHost ? { DOCKER_HOST: io.dockerHost } : process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
      signal: io.signal,
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', code => (code === 0 ? resolve() : reject(new Error(output.trim().split('\n').slice(-3).join(' | ') || `docker ${args[0]} exited with ${code}`))));
    child.stdin.end(input);
  });
}
