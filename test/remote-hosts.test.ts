// The remote test hosts kit (test/kit/remote-hosts.ts): real hosts with their own address, engine,
// sshd, logins and files, reached over real SSH (ssh2); images copied by save | load; hosts that
// reach each other; a run shared by its files; and a teardown that leaves nothing behind.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { Client } from 'ssh2';
import t from 'tap';
import { canRun, waitFor } from '@berth/core/testing';
import { alive, inHost, loadImage, privateRemoteHosts, processesOf, remoteHostsMissing, type RemoteHost } from './kit/remote-hosts.ts';

/** Runs one command over a new ssh2 connection that accepts only the host's own key. */
function sshExec(h: RemoteHost, user: string, command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const conn = new Client();
    conn
      .on('ready', () =>
        conn.exec(command, (err, ch) => {
          if (err) return reject(err);
          let stdout = '',
            stderr = '',
            code = -1;
          ch.on('data', (d: Buffer) => {
            stdout += d;
          });
          ch.stderr.on('data', (d: Buffer) => {
            stderr += d;
          });
          ch.on('exit', (c: number) => {
            code = c;
          });
          ch.on('close', () => {
            conn.end();
            resolve({ code, stdout, stderr });
          });
        }),
      )
      .on('error', reject)
      .connect({
        host: h.address,
        port: 22,
        username: user,
        privateKey: h.privateKey,
        readyTimeout: 10_000,
        hostHash: 'sha256',
        hostVerifier: (hash: string) => `SHA256:${Buffer.from(hash, 'hex').toString('base64').replace(/=+$/, '')}` === h.hostKeyFingerprint,
      });
  });
}

const containerOutput = (buf: Buffer) => {
  let out = '';
  for (let i = 0; i + 8 <= buf.length;) {
    const n = buf.readUInt32BE(i + 4);
    out += buf.subarray(i + 8, i + 8 + n).toString();
    i += 8 + n;
  }
  return out;
};

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const local = new Docker({ socketPath: '/var/run/docker.sock' });
  let t0 = performance.now();
  const set = await privateRemoteHosts(2);
  const startMs = performance.now() - t0;
  t.comment(`2 hosts started in ${startMs.toFixed(0)} ms`);
  const [a, b] = set.hosts as [RemoteHost, RemoteHost];
  let downDone = false;
  t.teardown(async () => {
    if (!downDone) await set.down();
  });

  t.test('each host answers SSH with its own key and hostname, for root and a user with passwordless sudo', async t => {
    for (const h of [a, b]) {
      t.match(h.hostKeyFingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/, `${h.name}: OpenSSH's fingerprint form`);
      const root = await sshExec(h, 'root', 'hostname; id -u');
      t.same(root.stdout.split('\n').slice(0, 2), [h.name, '0'], `${h.name}: root logs in, on the host's own hostname`);
      const user = await sshExec(h, h.user, 'id -un; id -Gn; sudo -n id -u');
      t.equal(user.code, 0, user.stderr);
      const [name, groups, sudoUid] = user.stdout.trim().split('\n');
      t.equal(name, h.user);
      t.match(groups, /\bdocker\b/, 'the user is in the docker group');
      t.equal(sudoUid, '0', 'sudo without a password');
    }
    t.not(a.hostKeyFingerprint, b.hostKeyFingerprint, 'each host has its own host key');
  });

  t.test("each host's engine is its own: another ID than this machine's, reached at /var/run/docker.sock over SSH", async t => {
    const localId = (await local.info()).ID as string;
    const ids = new Set([localId]);
    for (const h of [a, b]) {
      const info = await new Docker({ socketPath: h.socket }).info();
      t.equal(info.Name, h.name, `${h.name}: the engine runs on the host`);
      t.not(info.ID, localId, `${h.name}: not the local engine`);
      ids.add(info.ID);
      const over = await sshExec(h, h.user, 'docker info --format "{{.ID}}"');
      t.equal(over.stdout.trim(), info.ID, `${h.name}: docker over SSH reaches the same engine`);
    }
    t.equal(ids.size, 3, 'three engines, three IDs');
  });

  t.test('an image reaches a host by save | load, and a container runs there and nowhere else', async t => {
    await loadImage(a, 'berth-test/busybox:1');
    const remote = new Docker({ socketPath: a.socket });
    t.ok(await remote.getImage('berth-test/busybox:1').inspect(), 'the image is on host a');
    t.match(
      await new Docker({ socketPath: b.socket })
        .getImage('berth-test/busybox:1')
        .inspect()
        .catch(e => e),
      { statusCode: 404 },
      'and not on host b',
    );
    const c = await remote.createContainer({ Image: 'berth-test/busybox:1', Cmd: ['sh', '-c', 'echo ran on $(cat /etc/hostname)'], Labels: { 'berth.test': 'remote-hosts' } });
    t.teardown(() => c.remove({ force: true }).catch(() => {}));
    await c.start();
    t.same(await c.wait(), { StatusCode: 0, Error: null }, 'the container exits 0');
    t.match(containerOutput((await c.logs({ stdout: true, stderr: true })) as unknown as Buffer), /^ran on [0-9a-f]{12}\n$/);
    const here = await local.listContainers({ all: true, filters: JSON.stringify({ id: [c.id] }) });
    t.same(here, [], 'the container does not exist on the local engine');
  });

  t.test('hosts reach each other on their network, and this machine reaches them', async t => {
    const probe = (to: string) => sshExec(a, a.user, `exec 3<>/dev/tcp/${to}/22; head -c 8 <&3`);
    t.equal((await probe(b.address)).stdout, 'SSH-2.0-', "host a reaches host b's sshd");
    t.equal((await sshExec(b, 'root', `exec 3<>/dev/tcp/${a.address}/22; head -c 8 <&3`)).stdout, 'SSH-2.0-', 'and b reaches a');
    t.match(set.gateway, /^10\.\d+\.\d+\.1$/, "this machine has an address on the hosts' network");
  });

  t.test('logins and files are per host: /root, /home, /etc, ~/.docker/config.json', async t => {
    const marker = `berth-kit-${process.pid}`;
    const wrote = await sshExec(
      a,
      a.user,
      `mkdir -p ~/.docker && echo '{"auths":{"${marker}":{}}}' > ~/.docker/config.json && sudo -n sh -c 'echo ${marker} > /etc/${marker} && mkdir -p /root/.docker && echo x > /root/.docker/${marker}'`,
    );
    t.equal(wrote.code, 0, wrote.stderr);
    t.match((await sshExec(a, a.user, 'cat ~/.docker/config.json')).stdout, marker, 'written on host a');
    const onB = await sshExec(b, 'root', `ls /home/${b.user}/.docker/config.json /etc/${marker} /root/.docker/${marker} 2>&1; true`);
    t.equal(onB.stdout.match(/No such file/g)?.length, 3, 'host b has none of them');
    t.notOk(existsSync(`/etc/${marker}`), "this machine's /etc is untouched");
    t.notOk(existsSync(`/root/.docker/${marker}`), "this machine's /root is untouched");
    t.notOk(existsSync(path.join('/home', a.user)), "the host's user does not exist on this machine");
    const key = (await inHost(a, ['cat', '/etc/docker/key.json'])).stdout;
    t.ok(key, "the host's engine made its own key");
    t.not(key, readFileSync('/etc/docker/key.json', 'utf8'), "the machine's engine key is hidden from the host");
  });

  t.test("a run's hosts are shared: started once, reused by another process of the run", async t => {
    // The run's owner: a process standing for the tap runner; the hosts live as long as it does.
    const owner = spawn('sleep', ['120'], { stdio: 'ignore' });
    t.teardown(() => {
      owner.kill();
    });
    const env = { ...process.env, BERTH_TEST_HOSTS_OWNER: String(owner.pid) };
    const script = `import { sharedRemoteHosts } from ${JSON.stringify(new URL('./kit/remote-hosts.ts', import.meta.url).href)};
      const s = await sharedRemoteHosts(1); console.log(JSON.stringify({ holder: s.hosts[0].holderPid, runDir: s.runDir })); process.exit(0);`;
    const ask = () => JSON.parse(execFileSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], { env, encoding: 'utf8' })) as { holder: number; runDir: string };
    const first = ask(),
      second = ask();
    t.equal(second.holder, first.holder, "the second file of the run reuses the first one's host");
    t.ok(alive(first.holder), 'which outlives the file that started it');
    owner.kill();
    await waitFor("the run's hosts to be torn down once its owner exits", () => !existsSync(first.runDir) && !alive(first.holder), { timeout: 30_000, interval: 100 });
    t.pass('the reaper tore the run down');
  });

  t.test('teardown leaves no process, namespace, cgroup or directory behind', async t => {
    const running = await new Docker({ socketPath: a.socket }).createContainer({ Image: 'berth-test/busybox:1', Cmd: ['sleep', '300'] });
    await running.start();
    const containerPid = (await running.inspect()).State.Pid;
    const pids = [a, b].flatMap(h => processesOf(h));
    t.ok(pids.includes(containerPid), "a running container's process counts as the host's");
    t.ok(pids.length >= 9, `the hosts run processes (${pids.length}: holders, dockerd, containerd, sshd, a container)`);
    t0 = performance.now();
    await set.down();
    downDone = true;
    t.comment(`2 hosts torn down in ${(performance.now() - t0).toFixed(0)} ms`);
    t.same(pids.filter(alive), [], 'every process of the hosts has exited');
    const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    for (const h of [a, b]) {
      t.notMatch(netns, new RegExp(`^${h.name}\\b`, 'm'), `${h.name}: its network namespace is gone`);
      t.same(
        readdirSync('/sys/fs/cgroup').filter(c => existsSync(path.join('/sys/fs/cgroup', c, h.name))),
        [],
        `${h.name}: its cgroups are gone`,
      );
    }
    const bridge = a.name.replace(/h\d+$/, '');
    t.notMatch(netns, new RegExp(`^${bridge}\\b`, 'm'), 'the bridge namespace is gone');
    t.notMatch(execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' }), new RegExp(`\\b${bridge}r[@:]`), "this machine's leg on the bridge is gone");
    t.notOk(existsSync(set.runDir), 'the run directory is gone');
  });
}
