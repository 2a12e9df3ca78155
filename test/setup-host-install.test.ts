// scripts/start.sh as root on a machine without a Compose program: it installs one from the
// distribution's packages before it serves (berth setup-host), and a compose stack of type
// docker-compose then deploys; with BERTH_SETUP_HOST=0 nothing is installed. The machine is this
// one seen through a mount namespace of the test's own (unshare --mount): /etc, /usr and the
// package database copy-on-write over this machine's, docker-compose gone from its /usr and
// forgotten by its package database, and apt's only source the local file repository that
// scripts/services.sh fills from Debian's archive (/var/cache/berth-apt-repo). What the namespace
// installs lands in its own upper directory, which the test reads; this machine's files are never
// written. The Docker engine is this machine's (its socket is shared).
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { canRun, Client, deploymentFinished, deploymentIdOf, freePort, processDatabase, TEST_BASE_IMAGE, waitFor } from '@berth/core/testing';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const REPO = '/var/cache/berth-apt-repo';
const missing = () => {
  if (process.getuid?.() !== 0) return 'not root: a mount namespace with overlays needs root';
  if (!existsSync(`${REPO}/Packages`)) return `no local package repository at ${REPO} (scripts/services.sh fills it from Debian's archive)`;
  return undefined;
};

/** The namespace: overlays over /etc, /usr and the package database, docker-compose gone, the local repository apt's only source; then the command. */
const NAMESPACE = `set -e
dir=$1; shift
for d in etc usr var/lib/dpkg var/lib/apt; do
  mkdir -p "$dir/$d.up" "$dir/$d.work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$dir/$d.up,workdir=$dir/$d.work" "/$d"
done
for p in $(which -a docker-compose); do rm -f "$p"; done
perl -00 -ne 'print unless /^Package: docker-compose\\n/m' /var/lib/dpkg/status >"$dir/status"
cat "$dir/status" >/var/lib/dpkg/status
rm -f /var/lib/dpkg/info/docker-compose.* /etc/apt/sources.list.d/*
echo 'deb [trusted=yes] file:${REPO} ./' >/etc/apt/sources.list
mkdir -p "$dir/apt-cache/archives/partial"
echo "Dir::Cache \\"$dir/apt-cache\\";" >/etc/apt/apt.conf.d/99berth-test
command -v docker-compose >/dev/null && { echo "docker-compose is still there" >&2; exit 1; }
exec "$@"`;

/** Whether the namespace wrote a program there: a file in its upper directory (a removed one leaves a whiteout, a character device). */
const installed = (dir: string, file: string) => {
  try {
    return lstatSync(path.join(dir, file)).isFile();
  } catch {
    return false;
  }
};

/** `bash scripts/start.sh` inside a namespace of its own, on a fresh database (the row's: external, or the embedded one in its data directory) and data directory; stopped at teardown. */
async function startInNamespace(t: Test, env: Record<string, string>) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-ns-'));
  const db = await processDatabase();
  const port = await freePort();
  const dataDir = path.join(dir, 'data');
  const berthEnv = { ...process.env, ...db.env, BERTH_DATA_DIR: dataDir, PORT: String(port), BERTH_LOG_LEVEL: 'warn', BERTH_PROXY: 'none', ...env };
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'bash', '-c', NAMESPACE, 'berth-ns', dir, 'bash', 'scripts/start.sh'], {
    cwd: repoRoot,
    env: berthEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', d => (log += d));
  child.stderr!.on('data', d => (log += d));
  const exited = new Promise<void>(resolve => child.on('exit', () => resolve()));
  t.teardown(async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* gone */
    }
    await exited;
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  await waitFor(
    'Berth started by scripts/start.sh in the namespace',
    async () => {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}`);
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    },
    { timeout: 300_000, interval: 500 },
  ).catch(e => {
    throw new Error(`${(e as Error).message}\n${log.slice(-3000)}`);
  });
  /** The first admin's API key, made by the operator command (it opens the same database). */
  const admin = async () => {
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'a long password'], { cwd: repoRoot, env: berthEnv }).toString();
    return new Client(`http://127.0.0.1:${port}`, { apiKey: JSON.parse(out.trim().split('\n').at(-1)!).apiKey });
  };
  return { dir, log: () => log, admin };
}

if (canRun(t, 'apt-repo', missing())) {
  t.test('start.sh as root installs the Compose program that is missing, and a docker-compose stack deploys', async t => {
    const berth = await startInNamespace(t, {});
    t.match(berth.log(), /\[setup-host\] \[3\/4\] compose: /, 'the compose step says what it ensures before it runs');
    t.match(berth.log(), /apt-get install -y -q --no-install-recommends "\$@"/, 'it applies the distribution package through apt-get');
    t.match(berth.log(), /\[setup-host\] this machine is ready: 1 step\(s\) changed, the rest in place/, 'one step changed: compose');
    t.ok(installed(berth.dir, 'usr.up/bin/docker-compose'), 'docker-compose was installed, into the namespace (its upper directory), from the local repository');
    t.ok(existsSync('/usr/bin/docker-compose'), "this machine's own is untouched");

    const client = await berth.admin();
    const {
      body: { environment },
    } = await client.post('project.create', { name: 'compose after setup' });
    const appName = `ns-dc-${process.pid}`;
    const created = await client.post('compose.create', {
      name: 'after setup',
      environmentId: environment.environmentId,
      composeType: 'docker-compose',
      appName,
      composeFile: `services:\n  idle:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sleep", "3600"]\n    stop_grace_period: 1s\n`,
    });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { composeId } = created.body;
    t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
    const done = await deploymentFinished(client, deploymentIdOf(await client.post('compose.deploy', { composeId })), { timeout: 180_000 });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    t.match(log, /docker-compose/, 'deployed by the docker-compose program start.sh installed');
    t.equal((await client.get('compose.one', { composeId })).body.composeStatus, 'done');
  });

  t.test('with BERTH_SETUP_HOST=0 nothing is installed', async t => {
    const berth = await startInNamespace(t, { BERTH_SETUP_HOST: '0' });
    t.notMatch(berth.log(), '[setup-host]', 'the machine setup did not run');
    t.ok(lstatSync(path.join(berth.dir, 'usr.up/bin/docker-compose')).isCharacterDevice(), 'docker-compose removed in the namespace (a whiteout)');
    t.notOk(installed(berth.dir, 'usr.up/bin/docker-compose'), 'and nothing installed in its place');
  });
}
