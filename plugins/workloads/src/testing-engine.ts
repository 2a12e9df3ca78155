// A Docker engine of a test's own, beside the shared one: its own data-root, exec-root, pidfile,
// configuration file, cgroup parent and Unix socket, in a network namespace of its own (so its
// swarm listens on 2377 without meeting the shared engine's), holding only the images the test
// loads into it (`docker save | docker load`). Torn down by its process id; the shared engine and
// its images are never touched.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { waitFor } from '@berth/core/testing';

export interface TestEngine {
  /** `unix://…`: what DOCKER_HOST takes. */
  host: string;
  docker: Docker;
  /** The dockerd's process id. */
  pid: number;
  /** Repository tags of the images on the engine. */
  images(): Promise<string[]>;
  stop(): Promise<void>;
}

const CGROUPS = '/sys/fs/cgroup';

/** Starts the engine, in swarm mode when `swarm` (advertising 127.0.0.1 inside its namespace), with `images` copied from the shared engine. */
export async function startTestEngine(t: { teardown(fn: () => Promise<void> | void): void }, o: { images: string[]; swarm?: boolean }): Promise<TestEngine> {
  // Short on purpose: a Unix socket path has at most 107 bytes.
  const dir = mkdtempSync('/tmp/bde-');
  const name = path.basename(dir);
  writeFileSync(path.join(dir, 'daemon.json'), '{}');
  const socket = path.join(dir, 'd.sock');
  const args = [
    '--data-root',
    path.join(dir, 'data'),
    '--exec-root',
    path.join(dir, 'x'),
    '--pidfile',
    path.join(dir, 'pid'),
    '-H',
    `unix://${socket}`,
    '--config-file',
    path.join(dir, 'daemon.json'),
    '--cgroup-parent',
    `/${name}`,
    '--bridge',
    'none',
    '--iptables=false',
  ];
  // A network namespace with only loopback, brought up before dockerd replaces the shell (same pid).
  const child = spawn('unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', 'dockerd', ...args], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    log = (log + s).slice(-4000);
  });
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()));
  const pid = child.pid!;
  const stop = async () => {
    if (child.exitCode === null) {
      process.kill(pid, 'SIGTERM');
      await Promise.race([exited, new Promise(r => setTimeout(r, 30_000))]);
      if (child.exitCode === null) process.kill(pid, 'SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    // The cgroups its containers had, deepest first.
    for (const controller of existsSync(CGROUPS) ? readdirSync(CGROUPS) : []) {
      const root = path.join(CGROUPS, controller, name);
      if (existsSync(root)) execFileSync('find', [root, '-depth', '-type', 'd', '-exec', 'rmdir', '{}', ';']);
    }
  };
  t.teardown(stop);
  const docker = new Docker({ socketPath: socket });
  await waitFor(
    'the test engine to answer',
    async () => {
      if (child.exitCode !== null) throw new Error(`dockerd exited: ${log}`);
      return docker.ping().then(
        () => true,
        () => false,
      );
    },
    { timeout: 30_000 },
  );
  if (o.swarm) await docker.swarmInit({ ListenAddr: '127.0.0.1:2377', AdvertiseAddr: '127.0.0.1' });
  for (const image of o.images) {
    const saved = spawn('docker', ['save', image], { stdio: ['ignore', 'pipe', 'inherit'] });
    const stream = await docker.loadImage(saved.stdout!);
    await new Promise((resolve, reject) => docker.modem.followProgress(stream, e => (e ? reject(e) : resolve(undefined))));
  }
  const engine: TestEngine = {
    host: `unix://${socket}`,
    docker,
    pid: Number(readFileSync(path.join(dir, 'pid'), 'utf8')) || pid,
    images: async () => (await docker.listImages()).flatMap(i => i.RepoTags ?? []).filter(tag => tag !== '<none>:<none>'),
    stop,
  };
  return engine;
}
