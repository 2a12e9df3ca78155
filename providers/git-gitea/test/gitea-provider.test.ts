// The Gitea provider against Gitea on loopback (test/gitea-api.ts): the contract's shared suite,
// then what is Gitea's own — the token refreshed before it expires (a spent refresh token
// refused), an expired token named as such, the organization filter, the internal URL.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import type { GitAccount } from '@berth/core';
import { commitFiles, gitProviderConformance, makeGitRepo } from '@berth/core/testing';
import descriptor, { GiteaProvider } from '../src/index.ts';
import { startFakeGitea } from './gitea-api.ts';

const run = promisify(execFile);
const gitea = await startFakeGitea(t);
const app = await makeGitRepo({ Dockerfile: 'FROM scratch\n' });
t.teardown(app.cleanup);
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(app.dir, { VERSION: '2\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'feature/x']);
const feature = await commitFiles(app.dir, { 'x.txt': 'x\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', 'main']);
const branches = { main: app.commit, release, 'feature/x': feature };
await gitea.addGitRepo('team', 'app', app.dir, branches);
for (const [owner, name] of [
  ['team', 'api'],
  ['alice', 'tools'],
] as const)
  gitea.repos.push({ id: 500 + gitea.repos.length, owner, name, isPrivate: false, branches: { main: app.commit } });

const pair = gitea.issue(3600);
const account: GitAccount = {
  settings: { giteaUrl: gitea.url, clientId: gitea.app.clientId, expiresAt: pair.expiresAt, organizationName: null },
  secrets: { accessToken: pair.accessToken, refreshToken: pair.refreshToken, clientSecret: gitea.app.clientSecret },
};
const refusedAccount: GitAccount = { ...account, secrets: { ...account.secrets, accessToken: 'not-a-token-gitea-issued' } };

// Collaborators of the repository: a writer and a reader.
gitea.permissions.set(
  'team/app',
  new Map([
    ['writer', 'write'],
    ['reader', 'read'],
  ]),
);

// Pull request #4 of team/app, from the fork alice/tools by "writer".
gitea.pullRequests.set('team/app#4', { head: 'alice/tools', branch: 'feature/x', sha: feature, base: 'main', author: { id: 7, login: 'writer' }, state: 'open' });

gitProviderConformance(t, descriptor, {
  account,
  refusedAccount,
  repositories: gitea.repos.map(r => `${r.owner}/${r.name}`),
  repository: { owner: 'team', name: 'app' },
  branches: Object.entries(branches).map(([name, commit]) => ({ name, commit })),
  pullRequest: 4,
  pullRequestHeld: { number: 4, state: 'open', headRepository: 'alice/tools', headBranch: 'feature/x', headSha: feature, baseBranch: 'main', author: { id: '7', login: 'writer' } },
  writeAccess: { writer: { id: '7', login: 'writer' }, reader: { id: '8', login: 'reader' }, stranger: { id: '9', login: 'stranger' } },
  service: {
    webhooks: repo => (gitea.webhooks.get(`${repo.owner}/${repo.name}`) ?? []).map(h => ({ id: h.id, url: h.url })),
    comments: (repo, n) => gitea.comments.get(`${repo.owner}/${repo.name}#${n}`) ?? [],
  },
});

t.test("Gitea's own rules", async t => {
  const provider = new GiteaProvider();

  t.test('a token that expires soon is refreshed; the new pair works and the old refresh token is spent', async t => {
    const soon = gitea.issue(30);
    const expiring: GitAccount = { settings: { ...account.settings, expiresAt: soon.expiresAt }, secrets: { ...account.secrets, accessToken: soon.accessToken, refreshToken: soon.refreshToken } };
    t.equal(await provider.refresh(account, 60_000), null, 'an hour left: nothing to do');
    const update = await provider.refresh(expiring, 60_000);
    t.ok(update, 'thirty seconds left: refreshed');
    t.not(update!.secrets.accessToken, soon.accessToken, 'a new access token');
    t.ok(Number(update!.settings.expiresAt) > Date.now() / 1000 + 3000, 'and its expiry');
    const renewed: GitAccount = { settings: { ...expiring.settings, ...update!.settings }, secrets: { ...expiring.secrets, ...update!.secrets } };
    t.equal((await provider.listRepositories(renewed)).length, gitea.repos.length, 'the new token lists');
    await t.rejects(provider.refresh(expiring, 60_000), { failure: 'credentials', message: /^Gitea refused to refresh the token: token was already used/ });
  });

  t.test("an expired token fails as credentials, with Gitea's reason", async t => {
    const old = gitea.issue(3600);
    gitea.tokens.set(old.accessToken, Date.now() - 1000);
    await t.rejects(provider.listRepositories({ ...account, secrets: { ...account.secrets, accessToken: old.accessToken } }), {
      failure: 'credentials',
      message: /^Gitea refused the token: token is expired/,
    });
  });

  t.test("organizationName keeps that owner's repositories; giteaInternalUrl is where Berth reaches the server", async t => {
    t.same((await provider.listRepositories({ ...account, settings: { ...account.settings, organizationName: 'team' } })).map(r => r.name).sort(), ['api', 'app']);
    const inside: GitAccount = { ...account, settings: { ...account.settings, giteaUrl: 'https://gitea.example.com', giteaInternalUrl: gitea.url } };
    t.equal((await provider.cloneCredential(inside)).baseUrl, `${gitea.url}/`);
    t.equal((await provider.listRepositories(inside)).length, gitea.repos.length);
  });

  t.test('an account that never finished the OAuth flow says so', async t => {
    await t.rejects(provider.listRepositories({ settings: account.settings, secrets: {} }), { failure: 'credentials', message: /not authorized yet/ });
  });
});
