// Real remote hosts for the tests, on this machine: each host is a network namespace with its own
// address on a private bridge, its own dockerd and its own sshd (Debian's openssh-server) in its
// own mount and UTS namespaces (remote-host-inside.sh), so keys, logins, /etc and the engine are
// the host's. A run's hosts are started once and shared by the test files of that run (a state file
// under a lock in the run directory; reused while alive) and torn down by recorded process ids when
// the run ends (a detached reaper watches the run's owner process), or at once by `down`.
// Traffic goes only to loopback and to these namespaces. Needs root, iproute2, util-linux
// (nsenter, unshare), docker.io, openssh-server and sudo: scripts/services.sh installs them.
//
// Only node builtins are imported: the reaper runs this file with plain node.
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One running remote test host. */
export interface RemoteHost {
  /** Its name: hostname, network namespace and cgroup parent (e.g. bh3h1). */
  name: string;
  /** Its address on the hosts' private network; sshd listens on port 22. */
  address: string;
  /** Its engine's socket, reachable from this machine (the host itself has it at /var/run/docker.sock). */
  socket: string;
  /** The non-root login with passwordless sudo, in the docker group (root logs in too). */
  user: string;
  /** The run's client private key (OpenSSH format), authorized for root and user on every host. */
  privateKey: string;
  /** Its public half, as an authorized_keys line. */
  publicKey: string;
  /** The host key's SHA-256 fingerprint as OpenSSH prints it, read when the host started. */
  hostKeyFingerprint: string;
  /** The host's directory on this machine (engine data, logs, its /root, /home, /tmp). */
  dir: string;
  /** The process holding the host's namespaces (nsenter --target). */
  holderPid: number;
}

/** A set of hosts started together: one bridge, one subnet, one run directory. */
export interface RemoteHostSet {
  /** The hosts, in start order. */
  hosts: RemoteHost[];
  /** This machine's address on the hosts' network (hosts reach it there). */
  gateway: string;
  /** Where the state file, the client key and the hosts' directories live. */
  runDir: string;
}

interface State {
  subnet: number;
  owner: number;
  reaper?: number;
  gateway: string;
  hosts: RemoteHost[];
}

const BASE = process.env.BERTH_TEST_HOSTS_DIR ?? '/var/tmp/berth-hosts';
const NET = process.env.BERTH_TEST_HOSTS_NET ?? '10.213'; // a /16; run k uses NET.k.0/24
const USER = 'berth';
const kitFile = fileURLToPath(import.meta.url);
const insideScript = path.join(path.dirname(kitFile), 'remote-host-inside.sh');
const sleep = (ms: number) => new Promise<void>(r => setTimeout(r, ms));

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program (argument array, no shell) and answers its exit code and output. */
function run(argv: string[], input?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = execFile(argv[0]!, argv.slice(1), { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** Runs a program that must succeed; the error names it and carries its stderr. */
async function must(argv: string[], input?: string): Promise<string> {
  const r = await run(argv, input);
  if (r.code !== 0) throw new Error(`${argv.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** A live process: exists and is not a zombie. */
export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** What is missing on this machine for the kit to run, or undefined when it can. */
export function remoteHostsMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  for (const p of ['/usr/sbin/ip', '/usr/bin/nsenter', '/usr/bin/unshare', '/usr/sbin/dockerd', '/usr/sbin/sshd', '/usr/bin/ssh-keygen', '/usr/bin/sudo']) {
    if (!existsSync(p)) return `${p} is missing (bash scripts/services.sh installs it)`;
  }
  return undefined;
}

const readState = (runDir: string): State | undefined => {
  try {
    return JSON.parse(readFileSync(path.join(runDir, 'state.json'), 'utf8')) as State;
  } catch {
    return undefined;
  }
};
const writeState = (runDir: string, state: State) => writeFileSync(path.join(runDir, 'state.json'), JSON.stringify(state, null, 2));

/** The host's engine and sshd answer, and the process holding its namespaces lives. */
function hostAlive(h: RemoteHost): boolean {
  const pid = (f: string) => {
    try {
      return Number(readFileSync(path.join(h.dir, f), 'utf8').trim());
    } catch {
      return 0;
    }
  };
  return alive(h.holderPid) && alive(pid('docker.pid')) && alive(pid('sshd.pid'));
}

/** Holds an exclusive lock file while fn runs; a lock left by a dead process is taken over. */
async function withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      closeSync(openSync(file, 'wx'));
      writeFileSync(file, String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number(readFileSync(file, 'utf8').trim() || 0);
      if (holder && !alive(holder)) {
        try {
          unlinkSync(file);
        } catch {
          /* taken by another */
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`the remote hosts lock ${file} is held by ${holder}`);
      await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    try {
      unlinkSync(file);
    } catch {
      /* gone */
    }
  }
}

/** Claims a free subnet index: creating the bridge namespace is the atomic claim. */
async function claimSubnet(): Promise<number> {
  for (let k = 1; k < 255; k++) {
    if ((await run(['ip', 'netns', 'add', `bh${k}`])).code === 0) return k;
  }
  throw new Error('no free remote-hosts subnet (254 runs alive?)');
}

/** The bridge namespace with one leg in this machine's namespace (NET.k.1). */
async function startBridge(k: number): Promise<string> {
  const ns = `bh${k}`,
    gateway = `${NET}.${k}.1`;
  await must(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
  await must(['ip', '-n', ns, 'link', 'add', 'br0', 'type', 'bridge']);
  await must(['ip', '-n', ns, 'link', 'set', 'br0', 'up']);
  await must(['ip', 'link', 'add', `${ns}r`, 'type', 'veth', 'peer', 'name', `${ns}rb`, 'netns', ns]);
  await must(['ip', '-n', ns, 'link', 'set', `${ns}rb`, 'master', 'br0', 'up']);
  await must(['ip', 'addr', 'add', `${gateway}/24`, 'dev', `${ns}r`]);
  await must(['ip', 'link', 'set', `${ns}r`, 'up']);
  return gateway;
}

const fingerprintOf = async (h: Pick<RemoteHost, 'holderPid'>) => (await inHostMust(h, ['ssh-keygen', '-l', '-E', 'sha256', '-f', '/etc/ssh/ssh_host_ed25519_key.pub'])).split(' ')[1]!;

/** Starts host i of subnet k: its namespace, its leg on the bridge, then its inside (dockerd, sshd). */
async function startHost(runDir: string, k: number, i: number, key: { privateKey: string; publicKey: string }): Promise<RemoteHost> {
  const name = `bh${k}h${i}`,
    bridge = `bh${k}`,
    address = `${NET}.${k}.${10 + i}`;
  const dir = path.join(runDir, `h${i}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'authorized_keys'), key.publicKey);
  await must(['ip', 'netns', 'add', name]);
  await must(['ip', '-n', name, 'link', 'set', 'lo', 'up']);
  await must(['ip', '-n', name, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', `${name}b`, 'netns', bridge]);
  await must(['ip', '-n', bridge, 'link', 'set', `${name}b`, 'master', 'br0', 'up']);
  await must(['ip', '-n', name, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
  await must(['ip', '-n', name, 'link', 'set', 'eth0', 'up']);
  const log = openSync(path.join(dir, 'inside.log'), 'a');
  // nsenter --net, not `ip netns exec`: the latter remounts /sys and hides the cgroup mounts dockerd needs.
  const child = spawn('nsenter', [`--net=/run/netns/${name}`, 'unshare', '--mount', '--uts', '--propagation', 'private', 'bash', insideScript, dir, name, USER], {
    detached: true,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  child.unref();
  const holderPid = child.pid!;
  const deadline = Date.now() + 60_000;
  while (!existsSync(path.join(dir, 'ready'))) {
    if (!alive(holderPid) || Date.now() > deadline) {
      throw new Error(`remote host ${name} did not start: ${readFileSync(path.join(dir, 'inside.log'), 'utf8').slice(-2000)}`);
    }
    await sleep(50);
  }
  const host: RemoteHost = { name, address, socket: path.join(dir, 'docker.sock'), user: USER, ...key, hostKeyFingerprint: '', dir, holderPid };
  host.hostKeyFingerprint = await fingerprintOf(host);
  return host;
}

/** Starts the reaper: a detached process that tears the run down once its owner has exited. */
function startReaper(runDir: string, owner: number): number {
  const log = openSync(path.join(runDir, 'reaper.log'), 'a');
  // Not the test runner's environment: its NODE_OPTIONS would load its loaders into the reaper.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('TAP')));
  const child = spawn(process.execPath, ['--no-warnings', kitFile, 'reap', runDir, String(owner)], { detached: true, stdio: ['ignore', log, log], env });
  closeSync(log);
  child.unref();
  return child.pid!;
}

/** Adds hosts to the run in runDir (creating it) until it has count of them. */
async function ensureHosts(runDir: string, owner: number, count: number): Promise<RemoteHostSet> {
  mkdirSync(runDir, { recursive: true });
  let state = readState(runDir);
  if (state && !state.hosts.every(hostAlive)) {
    await teardown(runDir, { keepDir: true });
    state = undefined;
  }
  if (!state) {
    const subnet = await claimSubnet();
    state = { subnet, owner, gateway: '', hosts: [] };
    writeState(runDir, state); // recorded before anything else starts, so teardown finds it
    state.gateway = await startBridge(subnet);
    writeState(runDir, state);
  }
  if (!alive(state.reaper)) {
    state.reaper = startReaper(runDir, owner);
    writeState(runDir, state);
  }
  if (state.hosts.length < count) {
    const keyFile = path.join(runDir, 'client');
    if (!existsSync(keyFile)) await must(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'berth-test-client', '-f', keyFile]);
    const key = { privateKey: readFileSync(keyFile, 'utf8'), publicKey: readFileSync(`${keyFile}.pub`, 'utf8') };
    const s = state;
    const added = await Promise.all(Array.from({ length: count - s.hosts.length }, (_, j) => startHost(runDir, s.subnet, s.hosts.length + j + 1, key)));
    state.hosts.push(...added);
    writeState(runDir, state);
  }
  return { hosts: state.hosts.slice(0, count), gateway: state.gateway, runDir };
}

/** The owner of a shared run: the tap runner for a file run by tap, else this process. */
const runOwner = () => Number(process.env.BERTH_TEST_HOSTS_OWNER ?? (process.env.TAP === '1' ? process.ppid : process.pid));

/**
 * count hosts shared by every test file of this run: started by the first file that asks (under a
 * lock), reused by the others while alive, torn down when the run (its owner process) ends. A test
 * that changes a host (its key, its sshd) should take private hosts instead.
 */
export async function sharedRemoteHosts(count: number): Promise<RemoteHostSet> {
  const owner = runOwner();
  const runDir = path.join(BASE, `r${owner}`);
  mkdirSync(BASE, { recursive: true });
  return withLock(`${runDir}.lock`, () => ensureHosts(runDir, owner, count));
}

let privateRuns = 0;
/** count hosts of this process alone; down() tears them down (and the reaper does when it exits). */
export async function privateRemoteHosts(count: number): Promise<RemoteHostSet & { down(): Promise<void> }> {
  const runDir = path.join(BASE, `p${process.pid}-${++privateRuns}`);
  try {
    const set = await ensureHosts(runDir, process.pid, count);
    return { ...set, down: () => teardown(runDir) };
  } catch (e) {
    await teardown(runDir);
    throw e;
  }
}

/** Runs argv inside the host's namespaces (network, mount, UTS) as root: the kit's console. */
export function inHost(h: Pick<RemoteHost, 'holderPid'>, argv: string[], input?: string): Promise<Ran> {
  return run(['nsenter', `--target=${h.holderPid}`, '--mount', '--uts', '--net', '--', ...argv], input);
}

async function inHostMust(h: Pick<RemoteHost, 'holderPid'>, argv: string[], input?: string): Promise<string> {
  const r = await inHost(h, argv, input);
  if (r.code !== 0) throw new Error(`${argv.join(' ')} on the host exited ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Copies an image of this machine's engine to the host: docker save | docker -H unix://<socket> load. */
export function loadImage(h: Pick<RemoteHost, 'socket'>, image: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const save = spawn('docker', ['save', image], { stdio: ['ignore', 'pipe', 'pipe'] });
    const load = spawn('docker', ['-H', `unix://${h.socket}`, 'load', '-q'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    save.stderr.on('data', (c: Buffer) => {
      err += c;
    });
    load.stderr.on('data', (c: Buffer) => {
      err += c;
    });
    save.stdout.pipe(load.stdin);
    let pending = 2,
      failed = false;
    const done = (who: string) => (code: number | null) => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new Error(`docker ${who} of ${image} exited ${code}: ${err.trim()}`));
      }
      if (--pending === 0 && !failed) resolve();
    };
    save.on('close', done('save'));
    load.on('close', done('load'));
  });
}

const sshdPid = (h: Pick<RemoteHost, 'dir'>) => Number(readFileSync(path.join(h.dir, 'sshd.pid'), 'utf8').trim());

/** Stops the host's sshd listener (sessions open stay) and starts a new one; answers once it listens. */
export async function restartSshd(h: RemoteHost): Promise<void> {
  const old = sshdPid(h);
  process.kill(old, 'SIGTERM');
  while (alive(old)) await sleep(20);
  rmSync(path.join(h.dir, 'sshd.pid'), { force: true });
  await inHostMust(h, ['/usr/sbin/sshd', '-E', path.join(h.dir, 'sshd.log')]);
  while (!existsSync(path.join(h.dir, 'sshd.pid'))) await sleep(20);
}

/**
 * Cuts every open SSH connection of the host, as a dropped link would: the sshd processes serving
 * them (the privileged monitor and the user's side, which holds the socket; those of an sshd since
 * restarted too) are killed; what they ran is left to notice on its own, as after a real drop.
 * Answers how many connections there were.
 */
export async function dropSshSessions(h: RemoteHost): Promise<number> {
  const listener = sshdPid(h);
  const comm = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  };
  const parent = (p: number) => {
    try {
      const s = readFileSync(`/proc/${p}/stat`, 'utf8');
      return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return 0;
    }
  };
  const sshd = processesOf(h).filter(p => p !== listener && comm(p) === 'sshd');
  const monitors = sshd.filter(p => !sshd.includes(parent(p)));
  // The user's side first: with it gone nothing can report an exit status to the client any more.
  for (const pid of [...sshd.filter(p => !monitors.includes(p)), ...monitors]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  return monitors.length;
}

/** Takes the host off its network (its link down) without a word to its peers, as a host that goes away would. */
export async function cutNetwork(h: Pick<RemoteHost, 'name'>): Promise<void> {
  await must(['ip', '-n', h.name, 'link', 'set', 'eth0', 'down']);
}

/** Brings the host back on its network after cutNetwork. */
export async function restoreNetwork(h: Pick<RemoteHost, 'name'>): Promise<void> {
  await must(['ip', '-n', h.name, 'link', 'set', 'eth0', 'up']);
}

/** Gives the host a new host key (as a reinstall would) and restarts sshd; answers its fingerprint. */
export async function regenerateHostKey(h: RemoteHost): Promise<string> {
  await inHostMust(h, ['rm', '-f', '/etc/ssh/ssh_host_ed25519_key', '/etc/ssh/ssh_host_ed25519_key.pub']);
  await inHostMust(h, ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', `root@${h.name}`, '-f', '/etc/ssh/ssh_host_ed25519_key']);
  await restartSshd(h);
  return fingerprintOf(h);
}

/** Appends an authorized_keys line for user (root or the host's user) on the host. */
export async function authorizeKey(h: RemoteHost, user: string, publicKey: string): Promise<void> {
  const home = user === 'root' ? '/root' : `/home/${user}`;
  await inHostMust(h, ['tee', '-a', `${home}/.ssh/authorized_keys`], publicKey.trim() + '\n');
}

const nsInode = (file: string) => {
  try {
    return statSync(file).ino;
  } catch {
    return undefined;
  }
};
const cgroupDirs = (name: string) =>
  readdirSync('/sys/fs/cgroup')
    .map(c => path.join('/sys/fs/cgroup', c, name))
    .filter(d => existsSync(d));

/** Every process of the host: in its network or mount namespace, or in its containers' cgroups. */
export function processesOf(h: Pick<RemoteHost, 'name' | 'holderPid'>, mountNs = nsInode(`/proc/${h.holderPid}/ns/mnt`)): number[] {
  const netNs = nsInode(`/run/netns/${h.name}`);
  const pids = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const net = nsInode(`/proc/${entry}/ns/net`),
      mnt = nsInode(`/proc/${entry}/ns/mnt`);
    if ((netNs !== undefined && net === netNs) || (mountNs !== undefined && mnt === mountNs)) pids.add(Number(entry));
  }
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(dir, e.name));
    try {
      for (const p of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (p) pids.add(Number(p));
    } catch {
      /* removed meanwhile */
    }
  };
  for (const d of cgroupDirs(h.name)) walk(d);
  return [...pids].filter(p => alive(p));
}

async function stopHost(h: RemoteHost): Promise<void> {
  const mountNs = nsInode(`/proc/${h.holderPid}/ns/mnt`);
  // Everything of the host goes with it (engine data included), so nothing needs a graceful stop:
  // the engine, containerd, the containers, sshd and its sessions and the holder are killed alike.
  for (const end = Date.now() + 10_000; ;) {
    const left = processesOf(h, mountNs);
    if (!left.length) break;
    if (Date.now() > end) throw new Error(`remote host ${h.name}: processes ${left.join(', ')} would not stop`);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await sleep(50);
  }
  for (const d of cgroupDirs(h.name)) {
    const dirs: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(dir, e.name));
      dirs.push(dir);
    };
    walk(d);
    for (const dir of dirs) {
      try {
        rmdirSync(dir);
      } catch {
        /* busy: reported by the caller's check */
      }
    }
  }
  await run(['ip', 'netns', 'del', h.name]);
}

/**
 * Tears down the run in runDir by its recorded process ids: each host's engine, sshd, containers and
 * namespace holder, its cgroups and network namespace, then the bridge and this machine's leg on it.
 */
export async function teardown(runDir: string, o: { keepDir?: boolean } = {}): Promise<void> {
  const state = readState(runDir);
  if (state) {
    const errors: string[] = [];
    const hosts = [...state.hosts];
    // hosts started but not yet recorded (a start that failed half-way) have directories: find their holders
    for (const d of existsSync(runDir) ? readdirSync(runDir) : []) {
      const m = /^h(\d+)$/.exec(d);
      if (m && !hosts.some(h => h.dir === path.join(runDir, d))) {
        hosts.push({ name: `bh${state.subnet}h${m[1]}`, dir: path.join(runDir, d), holderPid: 0 } as RemoteHost);
      }
    }
    await Promise.all(
      hosts.map(h =>
        stopHost(h).catch(e => {
          errors.push((e as Error).message);
        }),
      ),
    );
    for (const h of hosts) await run(['ip', 'netns', 'del', h.name]);
    await run(['ip', 'link', 'del', `bh${state.subnet}r`]);
    await run(['ip', 'netns', 'del', `bh${state.subnet}`]);
    if (state.reaper && state.reaper !== process.pid && alive(state.reaper)) {
      try {
        process.kill(state.reaper, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    if (errors.length) throw new Error(errors.join('; '));
  }
  if (o.keepDir) {
    for (const d of readdirSync(runDir)) if (d !== 'reaper.log') rmSync(path.join(runDir, d), { recursive: true, force: true });
  } else {
    rmSync(runDir, { recursive: true, force: true });
  }
}

// `node remote-hosts.ts up <count>` (prints the set), `down <runDir>`, and the reaper: `reap <runDir> <owner>`.
if (process.argv[1] === kitFile) {
  const [command, arg, owner] = process.argv.slice(2);
  if (command === 'reap') {
    for (;;) {
      if (!existsSync(path.join(arg!, 'state.json'))) process.exit(0);
      if (!alive(Number(owner))) {
        await teardown(arg!);
        process.exit(0);
      }
      await sleep(500);
    }
  } else if (command === 'up') {
    const t0 = performance.now();
    const set = await ensureHosts(path.join(BASE, `m${process.pid}`), 1, Number(arg ?? 1)); // owner 1: kept until `down`
    console.log(JSON.stringify({ ...set, hosts: set.hosts.map(({ privateKey: _, ...h }) => h), ms: Math.round(performance.now() - t0) }, null, 2));
    process.exit(0);
  } else if (command === 'down') {
    await teardown(arg!);
  } else {
    console.error('usage: remote-hosts.ts up <count> | down <runDir>');
    process.exit(2);
  }
}
