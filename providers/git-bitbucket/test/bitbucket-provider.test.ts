// The Bitbucket provider against Bitbucket Cloud on loopback (test/bitbucket-api.ts): the
// contract's shared suite with an API token, then what is Bitbucket's own — an app password
// works for older records until Bitbucket refuses it, and then the error says why; an API token
// without its e-mail is named; a `next` link to another host is not followed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import type { GitAccount } from '@berth/core';
import { commitFiles, gitProviderConformance, makeGitRepo } from '@berth/core/testing';
import descriptor, { BitbucketProvider } from '../src/index.ts';
import { startFakeBitbucket } from './bitbucket-api.ts';

const run = promisify(execFile);
const bb = await startFakeBitbucket(t);
const app = await makeGitRepo({ Dockerfile: 'FROM scratch\n' });
t.teardown(app.cleanup);
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(app.dir, { VERSION: '2\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'feature/x']);
const feature = await commitFiles(app.dir, { 'x.txt': 'x\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', 'main']);
const branches = { main: app.commit, release, 'feature/x': feature };
await bb.addGitRepo('team', 'app', app.dir, branches);
for (const slug of ['api', 'docs']) bb.repos.push({ workspace: 'team', slug, isPrivate: false, branches: { main: app.commit } });
bb.repos.push({ workspace: 'elsewhere', slug: 'tools', isPrivate: true, branches: { main: app.commit } });

const options = { apiUrl: bb.apiUrl, webUrl: bb.webUrl };
const account: GitAccount = {
  settings: { bitbucketUsername: bb.user.username, bitbucketEmail: bb.user.email, bitbucketWorkspaceName: 'team' },
  secrets: { apiToken: bb.user.apiToken, appPassword: null },
};
const refusedAccount: GitAccount = { ...account, secrets: { apiToken: 'ATATT-not-a-token-bitbucket-issued', appPassword: null } };

// Explicit permissions on the repository: a writer and a reader, by uuid.
bb.permissions.set(
  'team/app',
  new Map([
    ['{0c2f2d3a-1111-4b5e-9c1d-000000000001}', 'write'],
    ['{0c2f2d3a-1111-4b5e-9c1d-000000000002}', 'read'],
  ]),
);

// Pull request #7 of team/app, from elsewhere/tools by "writer" (Bitbucket names the commit by its short hash).
bb.pullRequests.set('team/app#7', {
  head: 'elsewhere/tools',
  branch: 'feature/x',
  sha: feature,
  base: 'main',
  author: { id: '{0c2f2d3a-1111-4b5e-9c1d-000000000001}', login: 'writer' },
  state: 'OPEN',
});

gitProviderConformance(t, descriptor, {
  options,
  account,
  refusedAccount,
  repositories: ['team/app', 'team/api', 'team/docs'],
  repository: { owner: 'team', name: 'app' },
  branches: Object.entries(branches).map(([name, commit]) => ({ name, commit })),
  pullRequest: 7,
  pullRequestHeld: {
    number: 7,
    state: 'open',
    headRepository: 'elsewhere/tools',
    headBranch: 'feature/x',
    headSha: feature.slice(0, 12),
    baseBranch: 'main',
    author: { id: '{0c2f2d3a-1111-4b5e-9c1d-000000000001}', login: 'writer' },
  },
  writeAccess: {
    writer: { id: '{0c2f2d3a-1111-4b5e-9c1d-000000000001}', login: 'writer' },
    reader: { id: '{0c2f2d3a-1111-4b5e-9c1d-000000000002}', login: 'reader' },
    stranger: { id: '{0c2f2d3a-1111-4b5e-9c1d-000000000003}', login: 'stranger' },
  },
  service: {
    webhooks: repo => (bb.webhooks.get(`${repo.owner}/${repo.name}`) ?? []).map(h => ({ id: h.id, url: h.url })),
    comments: (repo, n) => bb.comments.get(`${repo.owner}/${repo.name}#${n}`) ?? [],
  },
});

t.test("Bitbucket's own rules", async t => {
  const provider = new BitbucketProvider(options);
  const appPassword: GitAccount = { settings: { bitbucketUsername: bb.user.username, bitbucketWorkspaceName: null }, secrets: { appPassword: bb.user.appPassword } };

  t.test('an older record with an app password lists (the user name as the workspace) and clones as its user', async t => {
    bb.repos.push({ workspace: bb.user.username, slug: 'mine', isPrivate: true, branches: { main: app.commit } });
    t.teardown(() => void bb.repos.pop());
    t.same(
      (await provider.listRepositories(appPassword)).map(r => `${r.owner}/${r.name}`),
      [`${bb.user.username}/mine`],
    );
    const credential = await provider.cloneCredential(appPassword);
    t.same([credential.baseUrl, credential.username, credential.expiresAt], [`${bb.webUrl}/`, bb.user.username, null]);
    t.equal((await provider.cloneCredential(account)).username, 'x-bitbucket-api-token-auth', 'an API token clones as Atlassian says');
  });

  t.test('an API token without its e-mail is named', async t => {
    await t.rejects(provider.listRepositories({ ...account, settings: { ...account.settings, bitbucketEmail: null } }), { failure: 'credentials', message: /bitbucketEmail/ });
    await t.rejects(provider.listRepositories({ settings: {}, secrets: {} }), { failure: 'credentials', message: /no API token/ });
  });

  t.test('a `next` link to another host is not followed with the credential', async t => {
    const seen: (string | undefined)[] = [];
    const other = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"values":[]}');
    });
    await new Promise<void>(r => other.listen(0, '127.0.0.2', r));
    t.teardown(() => new Promise<void>(r => other.close(() => r())));
    const evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ values: [], next: `http://127.0.0.2:${(other.address() as AddressInfo).port}/2.0/x` }));
    });
    await new Promise<void>(r => evil.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>(r => evil.close(() => r())));
    const p = new BitbucketProvider({ apiUrl: `http://127.0.0.1:${(evil.address() as AddressInfo).port}/2.0`, webUrl: bb.webUrl });
    await t.rejects(p.listRepositories(account), { failure: 'repositories', message: /another host/ });
    t.same(seen, [], 'the other host got nothing');
  });

  // Last: from here on Bitbucket refuses every app password.
  t.test('once Bitbucket refuses app passwords, the error says so plainly', async t => {
    bb.retireAppPasswords();
    await t.rejects(provider.connect(appPassword), {
      failure: 'credentials',
      message: new RegExp(`^Bitbucket refused the app password of ${bb.user.username} \\(Invalid credentials\\): Atlassian is retiring app passwords; create an API token`),
    });
    t.ok(await provider.connect(account), 'an API token still works');
  });
});
