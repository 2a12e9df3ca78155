// A git provider's clone credential on the real clone path: bare repositories behind
// `git http-backend` that accept only that credential, a submodule on a second loopback host
// that must never receive it, and the token searched for in the checkout, the log and the
// argument lists of every process on the machine while git runs.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import type { CloneCredential } from '@berth/core';
import { commitFiles, makeGitRepo, startGitHttpServer } from '@berth/core/testing';
import { GitFetcher, type FetchRequest, type GitSourceSpec } from '../src/index.ts';

const run = promisify(execFile);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'berth-git-cred-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
const fetcher = new GitFetcher();

const token = `ghs_${'T0kEn'.repeat(8)}`;
const basic = Buffer.from(`x-access-token:${token}`).toString('base64');

/** Every file below dir (the .git directories included), read whole. */
function filesBelow(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) out.push(...filesBelow(file));
    else out.push({ file, text: readFileSync(file).toString('latin1') });
  }
  return out;
}

/** The argument lists of every process this user can see, now. */
function argumentLists(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try {
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

let n = 0;
function request(source: GitSourceSpec) {
  const workDir = path.join(tmp, `work-${++n}`);
  mkdirSync(workDir);
  const lines: string[] = [];
  const req: FetchRequest = { source, workDir, signal: new AbortController().signal, log: line => lines.push(line) };
  return { req, lines, workDir };
}

async function repositories(t: Test) {
  // The submodule's host: 127.0.0.2, another host to git than the provider's 127.0.0.1.
  const other = await startGitHttpServer(t, { host: '127.0.0.2' });
  const lib = await makeGitRepo({ 'lib.txt': 'from the submodule\n' });
  t.teardown(lib.cleanup);
  const libUrl = await other.addRepository('lib', lib.dir);

  const processes: string[][] = [];
  const provider = await startGitHttpServer(t, { credential: { username: 'x-access-token', password: token }, onRequest: () => processes.push(argumentLists()) });
  const app = await makeGitRepo({ Dockerfile: 'FROM scratch\n' });
  t.teardown(app.cleanup);
  await run('git', ['-C', app.dir, 'submodule', 'add', '-q', libUrl, 'vendor/lib']);
  const commit = await commitFiles(app.dir, {}, 'add the submodule');
  const appUrl = await provider.addRepository('team/app', app.dir);
  const credential: CloneCredential = { baseUrl: provider.url, username: 'x-access-token', password: token, expiresAt: null };
  return { other, provider, appUrl, commit, credential, processes };
}

t.test("a provider's credential clones its repository, and reaches no other host and no file", async t => {
  const { other, provider, appUrl, commit, credential, processes } = await repositories(t);
  const { req, lines, workDir } = request({ url: appUrl, branch: 'main', enableSubmodules: true, credential });
  t.same(await fetcher.fetch(req), { revision: commit });
  t.equal(readFileSync(path.join(workDir, 'Dockerfile'), 'utf8'), 'FROM scratch\n', 'the repository is checked out');
  t.equal(readFileSync(path.join(workDir, 'vendor/lib/lib.txt'), 'utf8'), 'from the submodule\n', 'with its submodule from the other host');

  const served = provider.requests.filter(r => r.authorization === `Basic ${basic}`);
  t.ok(
    served.some(r => r.path.endsWith('/git-upload-pack')),
    "the provider's host served the clone with the credential",
  );
  t.ok(
    other.requests.some(r => r.path.endsWith('/git-upload-pack')),
    'the other host served the submodule',
  );
  t.same(
    other.requests.filter(r => r.authorization !== undefined),
    [],
    'the other host never received an Authorization header',
  );

  for (const secret of [token, basic]) {
    const found = filesBelow(workDir)
      .filter(f => f.text.includes(secret))
      .map(f => path.relative(workDir, f.file));
    t.same(found, [], `no file of the checkout (.git/config and the submodule's included) holds ${secret === token ? 'the token' : 'the header'}`);
    t.same(
      lines.filter(l => l.includes(secret)),
      [],
      `no log line holds ${secret === token ? 'the token' : 'the header'}`,
    );
    t.same(
      processes.flat().filter(argv => argv.includes(secret)),
      [],
      `no argument list on the machine held ${secret === token ? 'the token' : 'the header'} while git ran`,
    );
  }
  t.ok(
    processes.flat().some(argv => argv.includes('git-remote-http') || argv.includes('remote-http')),
    'the argument lists were read while git was fetching',
  );
  const config = readFileSync(path.join(workDir, '.git/config'), 'utf8');
  t.notMatch(config, /extraheader|authorization/i, '.git/config has no header setting');
  t.match(config, `url = ${appUrl}`, 'the remote is the plain URL');
});

t.test('without the credential, or with another, the host refuses the clone', async t => {
  const { appUrl, credential } = await repositories(t);
  const none = request({ url: appUrl, branch: 'main' });
  await t.rejects(fetcher.fetch(none.req), { message: /could not read Username|Authentication failed|401/ });
  const wrong = request({ url: appUrl, branch: 'main', credential: { ...credential, password: 'ghs_wrong' } });
  await t.rejects(fetcher.fetch(wrong.req), { message: /Authentication failed|401|could not read/ });
  t.same(
    wrong.lines.filter(l => l.includes('ghs_wrong')),
    [],
    'the wrong token is not logged either',
  );
});

t.test('a credential for another host is refused before git runs', async t => {
  const { appUrl, credential } = await repositories(t);
  const elsewhere = request({ url: appUrl, branch: 'main', credential: { ...credential, baseUrl: 'https://github.com/' } });
  await t.rejects(fetcher.fetch(elsewhere.req), { message: "The provider's clone credential is for https://github.com/, and the repository URL is not below it" });
  t.same(elsewhere.lines, [], 'nothing ran');
  const below = request({ url: appUrl, branch: 'main', credential: { ...credential, baseUrl: `${credential.baseUrl}other-team/` } });
  await t.rejects(fetcher.fetch(below.req), { message: /is not below it$/ });
});

t.test("the remote's branches are read the way a clone reads them (a provider's testConnection)", async t => {
  const { provider, appUrl, commit, credential, processes } = await repositories(t);
  const signal = new AbortController().signal;
  t.same(await fetcher.remoteHeads({ url: appUrl, credential, signal }), [{ name: 'main', commit }], 'with the credential: the branch and its commit');
  t.ok(
    provider.requests.some(r => r.authorization === `Basic ${basic}`),
    'sent as the header',
  );
  t.same(
    processes.flat().filter(argv => argv.includes(token)),
    [],
    'in no argument list',
  );
  const refused = await fetcher.remoteHeads({ url: appUrl, credential: { ...credential, password: 'ghs_wrong_token' }, signal }).then(
    () => 'listed',
    (e: Error) => e.message,
  );
  t.match(refused, /Authentication failed|could not read Username/, "a refused credential fails with git's reason");
  t.notMatch(refused, /ghs_wrong_token/, 'which does not show the token');
  await t.rejects(fetcher.remoteHeads({ url: appUrl, credential: { ...credential, baseUrl: 'https://github.com/' }, signal }), { message: /is not below it$/ });
});

t.test("a redirect from the provider's host to another host does not carry the credential there", async t => {
  const other = await startGitHttpServer(t, { host: '127.0.0.2' });
  const repo = await makeGitRepo({ 'a.txt': 'a\n' });
  t.teardown(repo.cleanup);
  await other.addRepository('team/app', repo.dir);
  // The provider's host answers every request with a redirect to the other host.
  const redirector = http.createServer((req, res) => res.writeHead(302, { location: new URL(req.url ?? '/', other.url).href }).end());
  await new Promise<void>(resolve => redirector.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>(resolve => {
        redirector.closeAllConnections();
        redirector.close(() => resolve());
      }),
  );
  const base = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/`;
  const credential: CloneCredential = { baseUrl: base, username: 'x-access-token', password: token, expiresAt: null };
  const { req } = request({ url: `${base}team/app.git`, branch: 'main', credential });
  // git would keep sending the remote's header to the host a redirect moved it to: it must not follow one.
  await t.rejects(fetcher.fetch(req), { message: /302/ }, 'the redirect is not followed');
  t.same(
    other.requests.filter(r => r.authorization !== undefined).map(r => r.path),
    [],
    'the other host received no Authorization header',
  );
  const plain = request({ url: `${base}team/app.git`, branch: 'main' });
  await fetcher.fetch(plain.req);
  t.ok(other.requests.length > 0, 'without a credential the same redirect is followed (the server does redirect)');
});
