// A clone over real SSH with a stored key, against an sshd this test starts on a free local
// port (its own host key, authorized key and known-hosts file). BERTH_TEST_SSHD may name the sshd binary.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { canRun, freePort, makeGitRepo, waitFor } from '@berth/core/testing';
import { GitFetcher } from '../src/index.ts';

const run = promisify(execFile);
const sshd = [process.env.BERTH_TEST_SSHD, '/usr/sbin/sshd'].find((p): p is string => !!p && existsSync(p));
// sshd runs as root and drops privileges to its own "sshd" user, which its package creates.
const usable = !!sshd && process.getuid?.() === 0 && /^sshd:/m.test(readFileSync('/etc/passwd', 'utf8'));

// openssh-server (installed by scripts/services.sh) provides all three; without them this test fails.
if (canRun(t, 'sshd', sshd && usable ? undefined : 'no usable sshd on this host (binary, root, sshd user)') && sshd) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-sshd-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  const keygen = async (name: string) => {
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path.join(dir, name)]);
    return { privateKey: readFileSync(path.join(dir, name), 'utf8'), publicKey: readFileSync(path.join(dir, `${name}.pub`), 'utf8') };
  };

  const started = (async () => {
    const host = await keygen('host');
    const user = await keygen('user');
    const stranger = await keygen('stranger');
    writeFileSync(path.join(dir, 'authorized_keys'), user.publicKey, { mode: 0o600 });
    const port = await freePort();
    writeFileSync(
      path.join(dir, 'sshd_config'),
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${dir}/host`,
        `AuthorizedKeysFile ${dir}/authorized_keys`,
        `PidFile ${dir}/sshd.pid`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        '',
      ].join('\n'),
    );
    // sshd insists on its privilege separation directory.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    const server = spawn(sshd, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let serverLog = '';
    server.stderr.on('data', (c: Buffer) => {
      serverLog += c.toString();
    });
    t.teardown(() => {
      server.kill('SIGTERM');
    });
    await waitFor(
      'sshd to accept connections',
      async () => {
        if (server.exitCode !== null) throw new Error(`sshd exited: ${serverLog}`);
        return new Promise<boolean>(r => {
          const c = net.connect(port, '127.0.0.1', () => {
            c.destroy();
            r(true);
          });
          c.on('error', () => r(false));
        });
      },
      { timeout: 30_000, interval: 50 },
    );
    return { port, host, user, stranger };
  })();

  t.test('clones over SSH with the stored key, pinning the host key', async t => {
    const { port, user } = await started;
    const repo = await makeGitRepo({ 'index.html': 'over ssh' });
    t.teardown(repo.cleanup);
    const knownHostsFile = path.join(dir, 'known_hosts');
    const fetcher = new GitFetcher({ knownHostsFile });
    for (const attempt of ['first', 'second']) {
      const workDir = mkdtempSync(path.join(dir, 'work-'));
      const lines: string[] = [];
      const result = await fetcher.fetch({
        source: { kind: 'git', url: `ssh://root@127.0.0.1:${port}${repo.dir}`, branch: 'main', sshKey: { privateKey: user.privateKey } },
        workDir,
        signal: new AbortController().signal,
        log: l => lines.push(l),
      });
      t.same(result, { revision: repo.commit }, `${attempt} clone`);
      t.equal(readFileSync(path.join(workDir, 'index.html'), 'utf8'), 'over ssh');
      t.notMatch(lines.join('\n'), /PRIVATE KEY/, 'the key is never logged');
    }
    const hostKey = (await started).host.publicKey.split(' ').slice(0, 2).join(' ');
    t.match(readFileSync(knownHostsFile, 'utf8'), hostKey, 'the host key was accepted once and recorded');
  });

  t.test('a key the server does not know is refused with a clear message', async t => {
    const { port, stranger } = await started;
    const lines: string[] = [];
    const fetcher = new GitFetcher({ knownHostsFile: path.join(dir, 'known_hosts') });
    await t.rejects(
      fetcher.fetch({
        source: { kind: 'git', url: `ssh://root@127.0.0.1:${port}/srv/app.git`, branch: 'main', sshKey: { privateKey: stranger.privateKey } },
        workDir: mkdtempSync(path.join(dir, 'work-')),
        signal: new AbortController().signal,
        log: l => lines.push(l),
      }),
      { message: `root@127.0.0.1: Permission denied (publickey). Could not read from remote repository.` },
    );
    t.match(lines.join('\n'), 'Permission denied (publickey)');
  });

  t.test('a host whose key changed is refused', async t => {
    const { port, user, stranger } = await started;
    const pinned = path.join(dir, 'pinned_known_hosts');
    writeFileSync(pinned, `[127.0.0.1]:${port} ${stranger.publicKey.split(' ').slice(0, 2).join(' ')}\n`);
    const lines: string[] = [];
    await t.rejects(
      new GitFetcher({ knownHostsFile: pinned }).fetch({
        source: { kind: 'git', url: `ssh://root@127.0.0.1:${port}/srv/app.git`, branch: 'main', sshKey: { privateKey: user.privateKey } },
        workDir: mkdtempSync(path.join(dir, 'work-')),
        signal: new AbortController().signal,
        log: l => lines.push(l),
      }),
      { message: 'Host key verification failed. Could not read from remote repository.' },
    );
    t.match(lines.join('\n'), 'Host key verification failed.');
  });
}
