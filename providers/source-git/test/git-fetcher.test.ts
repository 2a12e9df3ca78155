// The git fetcher against real repositories made in temporary directories: clones and their
// revision, clear errors, inputs that must never reach a shell or be read as options, masked
// credentials, the SSH key's life, submodules and aborts.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import type { FetchRequest, GitSourceSpec } from '../src/index.ts';
import { commitFiles, makeGitRepo, waitFor } from '@berth/core/testing';
import { GitFetcher } from '../src/index.ts';

const run = promisify(execFile);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'berth-git-fetch-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
const fetcher = new GitFetcher();

async function repo(t: Test, files: Record<string, string>, branch = 'main') {
  const r = await makeGitRepo(files, { branch });
  t.teardown(r.cleanup);
  return r;
}

let n = 0;
/** A fetch into a fresh empty directory; answers the request and its log. */
function request(t: Test, source: Partial<GitSourceSpec> & Record<string, unknown>, signal = new AbortController().signal) {
  const workDir = path.join(tmp, `work-${++n}`);
  mkdirSync(workDir);
  const lines: string[] = [];
  const req: FetchRequest = { source: source as GitSourceSpec, workDir, signal, log: line => lines.push(line) };
  return { req, lines, workDir };
}

t.test('clones the branch of a repository and answers its commit', async t => {
  const r = await repo(t, { Dockerfile: 'FROM scratch\n', 'src/app.js': 'console.log(1)\n' });
  await run('git', ['-C', r.dir, 'checkout', '-q', '-b', 'release']);
  const release = await commitFiles(r.dir, { 'src/app.js': 'console.log(2)\n' });
  await run('git', ['-C', r.dir, 'checkout', '-q', 'main']);

  const main = request(t, { url: `file://${r.dir}`, branch: 'main' });
  t.same(await fetcher.fetch(main.req), { revision: r.commit });
  t.equal(readFileSync(path.join(main.workDir, 'src/app.js'), 'utf8'), 'console.log(1)\n');
  t.equal(main.lines[0], `Cloning file://${r.dir} (branch main)`);
  t.ok(main.lines.includes(`Checked out main at ${r.commit}`));
  const { stdout } = await run('git', ['-C', main.workDir, 'rev-list', '--count', 'HEAD']);
  t.equal(stdout.trim(), '1', 'a shallow clone');

  const rel = request(t, { url: r.dir, branch: 'release' });
  t.same(await fetcher.fetch(rel.req), { revision: release }, 'a local path and another branch');
  t.equal(readFileSync(path.join(rel.workDir, 'src/app.js'), 'utf8'), 'console.log(2)\n');
});

t.test("a missing branch or repository fails with git's own message", async t => {
  const r = await repo(t, { 'a.txt': 'a' });
  const { req, lines } = request(t, { url: `file://${r.dir}`, branch: 'nope' });
  await t.rejects(fetcher.fetch(req), { message: 'Remote branch nope not found in upstream origin' });
  t.ok(lines.includes('fatal: Remote branch nope not found in upstream origin'), "git's output is in the log");
  const missing = path.join(r.dir, 'missing');
  await t.rejects(fetcher.fetch(request(t, { url: `file://${missing}`, branch: 'main' }).req), { message: `'${missing}' does not appear to be a git repository` });
});

t.test('bad URLs are refused before git runs', async t => {
  const cases: [unknown, RegExp][] = [
    [undefined, /^The git source has no repository URL$/],
    [42, /^The git source has no repository URL$/],
    ['--upload-pack=touch /tmp/x', /must not start with "-"/],
    ['-uhttp://example.com/r.git', /must not start with "-"/],
    ['ext::sh -c touch% /tmp/pwned', /must not contain spaces/],
    ['ext::sh', /uses the unsupported scheme "ext"/],
    ['fd::17', /uses the unsupported scheme "fd"/],
    ['ftp://example.com/r.git', /unsupported scheme "ftp"/],
    ['https://example.com/r\n.git', /must not contain control characters/],
    ['https://example.com/r .git', /must not contain spaces/],
    ['ssh://-oProxyCommand=touch%20x/r.git', /has an invalid host/],
    ['ssh://-oProxyCommand=x@host/r.git', /has an invalid user name/],
    ['git@-oProxyCommand=x:r.git', /is not a valid URL/],
    ['relative/path', /is not a valid URL/],
  ];
  for (const [url, message] of cases) {
    await t.rejects(fetcher.fetch(request(t, { url, branch: 'main' }).req), { message }, JSON.stringify(url));
  }
});

t.test('branch names: shell metacharacters never reach a shell, option-like names are refused', async t => {
  const r = await repo(t, { 'a.txt': 'a' });
  const marker = path.join(tmp, 'pwned');
  const literal = [`main;touch\${IFS}${marker}`, `main$(touch\${IFS}${marker})`, `main|touch\${IFS}${marker}`, `\`touch\${IFS}${marker}\``];
  for (const branch of literal) {
    await t.rejects(fetcher.fetch(request(t, { url: r.dir, branch }).req), { message: `Remote branch ${branch} not found in upstream origin` }, branch);
  }
  const refused: [unknown, RegExp][] = [
    [`main;touch ${marker}`, /is not a valid branch name: it contains a space/],
    ['--upload-pack=touch', /must not start with "-"/],
    ['-b', /must not start with "-"/],
    ['main\nx', /contains control characters/],
    ['a..b', /contains "\.\." or "@\{"/],
    ['x/.hidden', /a component starts with "\."/],
    ['x.lock', /ends with "\." or "\.lock"/],
    ['', /^The git source has no branch$/],
    [undefined, /^The git source has no branch$/],
  ];
  for (const [branch, message] of refused) {
    await t.rejects(fetcher.fetch(request(t, { url: r.dir, branch }).req), { message }, JSON.stringify(branch));
  }
  t.notOk(existsSync(marker), 'no shell ran any of them');
});

t.test('credentials in the URL never reach the log or the error', async t => {
  // Nothing listens on port 1: git fails at once, naming the URL.
  for (const url of ['http://deploy:s3cr%3Dt-pass@127.0.0.1:1/team/app.git', 'https://tok-123456@127.0.0.1:1/team/app.git']) {
    const { req, lines } = request(t, { url, branch: 'main' });
    const err = await fetcher.fetch(req).then(
      () => null,
      (e: Error) => e,
    );
    t.ok(err, 'the clone fails');
    const text = `${err?.message}\n${lines.join('\n')}`;
    t.notMatch(text, /s3cr|tok-123456/, `nothing of the credential is shown for ${url.split('@')[1]}`);
    t.match(lines[0], /^Cloning https?:\/\/(deploy:)?\*\*\*\*\*\*@127\.0\.0\.1:1\/team\/app\.git/);
  }
  await t.rejects(fetcher.fetch(request(t, { url: 'ftp://user:hunter2@host/x', branch: 'main' }).req), {
    message: 'The repository URL "ftp://******@host/x" uses the unsupported scheme "ftp": use https, http, ssh or file',
  });
});

t.test('an SSH key is handed to ssh in a private file that is removed afterwards', async t => {
  const dir = t.testdir({ bin: {}, out: {} });
  const bin = path.join(dir, 'bin');
  const out = path.join(dir, 'out');
  // A stand-in ssh: records how git called it and what it could read, then fails like a refused key.
  writeFileSync(
    path.join(bin, 'ssh'),
    [
      '#!/bin/sh',
      `for a in "$@"; do printf '%s\\0' "$a"; done > '${out}/argv'`,
      'key=""; prev=""; for a in "$@"; do [ "$prev" = "-i" ] && key="$a"; prev="$a"; done',
      `stat -c %a "$key" > '${out}/mode'; stat -c %a "$(dirname "$key")" > '${out}/dirmode'; cat "$key" > '${out}/key'; echo "$key" > '${out}/path'`,
      'echo "git@example.com: Permission denied (publickey)." >&2',
      'exit 255',
      '',
    ].join('\n'),
  );
  chmodSync(path.join(bin, 'ssh'), 0o755);
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
  t.teardown(() => {
    process.env.PATH = savedPath;
  });

  const privateKey = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----';
  const { req } = request(t, { url: 'git@example.com:team/app.git', branch: 'main', sshKey: { privateKey } });
  await t.rejects(fetcher.fetch(req), { message: 'git@example.com: Permission denied (publickey). Could not read from remote repository.' });
  const argv = readFileSync(path.join(out, 'argv'), 'utf8').split('\0').slice(0, -1);
  const keyFile = readFileSync(path.join(out, 'path'), 'utf8').trim();
  t.same(argv.slice(0, 8), ['-i', keyFile, '-o', 'IdentitiesOnly=yes', '-o', 'StrictHostKeyChecking=accept-new', '-o', 'BatchMode=yes']);
  t.ok(argv.includes('git@example.com'), 'the host of the URL');
  t.match(argv.at(-1), /git-upload-pack 'team\/app\.git'/);
  t.equal(readFileSync(path.join(out, 'mode'), 'utf8').trim(), '600', 'the key file is private');
  t.equal(readFileSync(path.join(out, 'dirmode'), 'utf8').trim(), '700', 'so is its directory');
  t.equal(readFileSync(path.join(out, 'key'), 'utf8'), `${privateKey}\n`, 'the key, ending with a newline');
  t.notOk(existsSync(path.dirname(keyFile)), 'the key is removed after the clone');

  await t.rejects(fetcher.fetch(request(t, { url: 'git@example.com:a.git', branch: 'main', sshKey: { privateKey: '' } }).req), { message: "The git source's SSH key has no private key" });
  t.throws(() => new GitFetcher({ knownHostsFile: '/tmp/known hosts' }), { message: /must be an absolute path/ });
});

t.test('submodules are cloned only when asked', async t => {
  const sub = await repo(t, { 'lib.txt': 'from the submodule' });
  const parent = await repo(t, { 'app.txt': 'app' });
  await run('git', ['-c', 'protocol.file.allow=always', '-C', parent.dir, 'submodule', 'add', '-q', sub.dir, 'vendor/lib']);
  await commitFiles(parent.dir, {}, 'add the submodule');

  const plain = request(t, { url: parent.dir, branch: 'main' });
  await fetcher.fetch(plain.req);
  t.same(readdirSync(path.join(plain.workDir, 'vendor/lib')), [], 'not fetched by default');

  const withSubs = request(t, { url: parent.dir, branch: 'main', enableSubmodules: true });
  await fetcher.fetch(withSubs.req);
  t.equal(readFileSync(path.join(withSubs.workDir, 'vendor/lib/lib.txt'), 'utf8'), 'from the submodule');
  t.match(withSubs.lines[0], 'with submodules');
});

t.test('an abort stops git', async t => {
  // A server that accepts and never answers: git waits until it is killed.
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer(() => {});
  server.on('connection', s => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;

  const controller = new AbortController();
  const { req } = request(t, { url: `http://127.0.0.1:${port}/app.git`, branch: 'main' }, controller.signal);
  const pending = fetcher.fetch(req);
  await waitFor('git to connect', () => sockets.size > 0, { timeout: 60_000, interval: 50 });
  t.equal(sockets.size, 1, 'git is connected and waiting');
  const started = Date.now();
  controller.abort();
  await t.rejects(pending, { message: 'The source fetch was cancelled' });
  t.ok(Date.now() - started < 20_000, `promptly (${Date.now() - started} ms; git would otherwise wait forever)`);
  await waitFor("git's connection to close", () => sockets.size === 0, { timeout: 30_000, interval: 50 });
  t.equal(sockets.size, 0, "git's connection is closed: the process is gone");
});

t.test('git must be installed', async t => {
  const empty = t.testdir({ bin: {} });
  mkdirSync(path.join(empty, 'work'));
  const noGit = new GitFetcher({ searchPath: path.join(empty, 'bin') });
  await t.rejects(noGit.fetch(request(t, { url: '/x', branch: 'main' }).req), { message: 'Fetching a git source needs the "git" program on the host, and it is not installed' });
});
