// Test fixtures for builds and deployments: the locally built images (scripts/test-images.sh and db-images.sh,
// no registry is reachable) and real git repositories in temporary directories.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { waitFor } from './testing-support.ts';

const run = promisify(execFile);

/** A busybox-static base image: sh, httpd, nc, wget, printenv... CMD ["sh"]. */
export const TEST_BASE_IMAGE = 'berth-test/busybox:1';
/** FROM the base image, serves TEST_STATIC_ROOT on port 80 (the static builder's image in tests). */
export const TEST_STATIC_IMAGE = 'berth-test/static-httpd:2';
export const TEST_STATIC_ROOT = '/www';

// Database images, built locally by scripts/db-images.sh from a debootstrapped Debian.
/** Debian bookworm minbase (bash, apt): the base of the database images. */
export const TEST_DEBIAN_IMAGE = 'berth-test/debian:12';
/**
 * PostgreSQL 15 with the public postgres image's environment (POSTGRES_PASSWORD, POSTGRES_USER, POSTGRES_DB,
 * PGDATA, POSTGRES_HOST_AUTH_METHOD); data in /var/lib/postgresql/data, port 5432; psql, pg_dump, pg_restore on PATH.
 */
export const TEST_POSTGRES_IMAGE = 'berth-test/postgres:1';
/**
 * MariaDB 10.11 with the public mariadb and mysql images' environment (MARIADB_* or MYSQL_* ROOT_PASSWORD, DATABASE,
 * USER, PASSWORD); data in /var/lib/mysql, port 3306; mysql, mysqldump, mariadb-dump on PATH. Serves the mysql kind too.
 */
export const TEST_MARIADB_IMAGE = 'berth-test/mariadb:1';
/** Redis 7 run like the public redis image: data in /data, port 6379, a given command (redis-server --requirepass x) runs as is. */
export const TEST_REDIS_IMAGE = 'berth-test/redis:1';
/**
 * A stand-in for the public libsql-server image (test/stand-ins): `sqld` on PATH is a Python server of
 * Hrana over HTTP (/v2/pipeline, /v3/pipeline, /health, /version) over SQLite files below --db-path
 * (<db-path>/dbs/default/data), basic auth from SQLD_HTTP_AUTH, user sqld, data in /var/lib/sqld.
 */
export const TEST_LIBSQL_IMAGE = 'berth-test/libsql:1';

export interface GitRepoOptions {
  /** The branch of the first commit (default "main"). */
  branch?: string;
  message?: string;
}

export interface TestGitRepo {
  /** Absolute path of the working tree (clone it by path or as file://<dir>). */
  dir: string;
  /** The sha of the first commit. */
  commit: string;
  cleanup(): Promise<void>;
}

// Identity given per command, so the host's git configuration needs nothing.
const identity = ['-c', 'user.name=Berth Test', '-c', 'user.email=test@berth.invalid', '-c', 'commit.gpgsign=false'];

async function git(dir: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', [...identity, ...args], { cwd: dir, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
  return stdout.trim();
}

/** Writes the files (path relative to dir → content; null removes it), commits them all, answers the new commit's sha. */
export async function commitFiles(dir: string, files: Record<string, string | null>, message = 'update'): Promise<string> {
  for (const [name, content] of Object.entries(files)) {
    const file = path.resolve(dir, name);
    if (!file.startsWith(dir + path.sep)) throw new Error(`commitFiles: ${name} is outside the repository`);
    if (content === null) {
      await rm(file, { force: true });
    } else {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
    }
  }
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', '--allow-empty', '-m', message]);
  return git(dir, ['rev-parse', 'HEAD']);
}

/** A new git repository in a temporary directory with one commit of the given files. */
export async function makeGitRepo(files: Record<string, string>, opts: GitRepoOptions = {}): Promise<TestGitRepo> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-git-'));
  await git(dir, ['init', '-q', '-b', opts.branch ?? 'main']);
  const commit = await commitFiles(dir, files, opts.message ?? 'initial commit');
  return { dir, commit, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

let engine: Docker | undefined;
const docker = () => (engine ??= new Docker());

/**
 * What a test left on the engine under this appName: the service, then its named volumes (the
 * data volume, whatever its name: read from the service before it goes, and the older
 * `<appName>-data`) once no container holds them any more.
 */
export async function removeServiceAndVolume(appName: string): Promise<void> {
  type Mount = { Type?: string; Source?: string };
  const mounts = await docker()
    .getService(appName)
    .inspect()
    .then(
      (s: { Spec?: { TaskTemplate?: { ContainerSpec?: { Mounts?: Mount[] } } } }) => s.Spec?.TaskTemplate?.ContainerSpec?.Mounts ?? [],
      () => [] as Mount[],
    );
  const volumes = new Set([`${appName}-data`, ...mounts.filter(m => m.Type === 'volume' && m.Source).map(m => m.Source!)]);
  await docker()
    .getService(appName)
    .remove()
    .catch(() => undefined);
  for (const volume of volumes) {
    await waitFor(
      `${appName}'s volume ${volume} removed`,
      () =>
        docker()
          .getVolume(volume)
          .remove()
          .then(
            () => true,
            (e: { statusCode?: number }) => (e.statusCode === 404 ? true : Promise.reject(e)),
          ),
      { timeout: 60_000, interval: 250 },
    );
  }
}

/** 'gone' when the engine answers 404 for the inspected object, 'present' when it answers it, else the error status. */
export const engineGone = (inspected: Promise<unknown>): Promise<string> =>
  inspected.then(
    () => 'present',
    (e: { statusCode?: number }) => (e.statusCode === 404 ? 'gone' : `error ${e.statusCode}`),
  );

// Proxy images, built locally by scripts/db-images.sh from the same Debian base.
/** Caddy 2.6 from Debian's package (the caddy proxy provider's image in tests); XDG_DATA_HOME=/data. */
export const TEST_CADDY_IMAGE = 'berth-test/caddy:1';
/** Pebble, Let's Encrypt's ACME test server: directory https://<host>:14000/dir, its TLS certificate for "pebble" and "localhost" signed by /etc/pebble/ca.pem. */
export const TEST_PEBBLE_IMAGE = 'berth-test/pebble:1';
/** Debian's docker-registry laid out like the public registry:2 image (port 5000, /var/lib/registry, REGISTRY_* env): the self-hosted registry's image in tests. */
export const TEST_REGISTRY_IMAGE = 'berth-test/registry:1';
