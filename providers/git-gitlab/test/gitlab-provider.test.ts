// The GitLab provider against GitLab on loopback (test/gitlab-api.ts) used as a self-managed
// server: the contract's shared suite, then what is GitLab's own — the access token refreshed
// before it expires, an expired token named as such, the group filter, the internal URL, and the
// SDK loaded only once an account is used.
import { execFile } from 'node:child_process';
import { registerHooks } from 'node:module';
import { promisify } from 'node:util';
import t from 'tap';
import type { GitAccount, GitProvider } from '@berth/core';
import { commitFiles, gitProviderConformance, makeGitRepo } from '@berth/core/testing';
import { startFakeGitlab } from './gitlab-api.ts';

const loaded: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('@gitbeaker/')) loaded.push(specifier);
    return next(specifier, context);
  },
});
const { default: descriptor, GitlabProvider } = await import('../src/index.ts');

const run = promisify(execFile);
const gitlab = await startFakeGitlab(t);
const app = await makeGitRepo({ Dockerfile: 'FROM scratch\n' });
t.teardown(app.cleanup);
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(app.dir, { VERSION: '2\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'feature/x']);
const feature = await commitFiles(app.dir, { 'x.txt': 'x\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', 'main']);
const branches = { main: app.commit, release, 'feature/x': feature };
await gitlab.addGitProject('team/backend', 'app', app.dir, branches);
for (const [ns, path] of [
  ['team/backend', 'api'],
  ['team', 'docs'],
  ['alice', 'tools'],
] as const) {
  gitlab.projects.push({ id: 2000 + gitlab.projects.length, namespace: ns, path, visibility: 'public', branches: { main: app.commit } });
}

const pair = gitlab.issue(3600);
const account: GitAccount = {
  settings: { gitlabUrl: gitlab.url, applicationId: gitlab.app.clientId, redirectUri: gitlab.app.redirectUri, expiresAt: pair.expiresAt, groupName: null },
  secrets: { accessToken: pair.accessToken, refreshToken: pair.refreshToken, secret: gitlab.app.secret },
};
const refusedAccount: GitAccount = { ...account, secrets: { ...account.secrets, accessToken: 'not-a-token-gitlab-issued' } };

t.test('the descriptor loads no SDK; the first use of an account does', async t => {
  const provider = await descriptor.create({}, { config: {} as never });
  t.same(loaded, [], 'enabling the provider imports no @gitbeaker module');
  await provider.connect(account);
  t.ok(loaded.includes('@gitbeaker/rest'), 'the first call imports it');
});

// Members of the project: a Developer may push, a Reporter may not.
gitlab.members.set(
  'team/backend/app',
  new Map([
    [51, { username: 'dev', accessLevel: 30 }],
    [52, { username: 'reporter', accessLevel: 20 }],
  ]),
);

// Merge request !3 of team/backend/app, from the fork alice/tools by "dev".
gitlab.mergeRequests.set('team/backend/app!3', { head: 'alice/tools', branch: 'feature/x', sha: feature, base: 'main', author: { id: 51, login: 'dev' }, state: 'opened' });

gitProviderConformance(t, descriptor, {
  account,
  refusedAccount,
  repositories: gitlab.projects.map(p => `${p.namespace}/${p.path}`),
  repository: { owner: 'team/backend', name: 'app' },
  branches: Object.entries(branches).map(([name, commit]) => ({ name, commit })),
  pullRequest: 3,
  pullRequestHeld: { number: 3, state: 'open', headRepository: 'alice/tools', headBranch: 'feature/x', headSha: feature, baseBranch: 'main', author: { id: '51', login: 'dev' } },
  writeAccess: { writer: { id: '51', login: 'dev' }, reader: { id: '52', login: 'reporter' }, stranger: { id: '53', login: null } },
  service: {
    webhooks: repo => (gitlab.webhooks.get(`${repo.owner}/${repo.name}`) ?? []).map(h => ({ id: h.id, url: h.url })),
    comments: (repo, n) => gitlab.notes.get(`${repo.owner}/${repo.name}!${n}`) ?? [],
  },
});

t.test("GitLab's own rules", async t => {
  const provider: GitProvider = new GitlabProvider();

  t.test('a token that expires soon is refreshed; the new pair works and the old refresh token is spent', async t => {
    const soon = gitlab.issue(30);
    const expiring: GitAccount = { settings: { ...account.settings, expiresAt: soon.expiresAt }, secrets: { ...account.secrets, accessToken: soon.accessToken, refreshToken: soon.refreshToken } };
    t.equal(await provider.refresh(account, 60_000), null, 'an hour left: nothing to do');
    const update = await provider.refresh(expiring, 60_000);
    t.ok(update, 'thirty seconds left: refreshed');
    t.not(update!.secrets.accessToken, soon.accessToken, 'a new access token');
    t.ok(Number(update!.settings.expiresAt) > Date.now() / 1000 + 7000, "and its expiry, from GitLab's answer");
    const renewed: GitAccount = { settings: { ...expiring.settings, ...update!.settings }, secrets: { ...expiring.secrets, ...update!.secrets } };
    t.equal((await provider.listRepositories(renewed)).length, gitlab.projects.length, 'the new token lists');
    await t.rejects(
      provider.refresh(expiring, 60_000),
      { failure: 'credentials', message: /^GitLab refused to refresh the token: The provided authorization grant is invalid/ },
      'a spent refresh token is refused',
    );
  });

  t.test("an expired token fails as credentials, with GitLab's reason", async t => {
    const old = gitlab.issue(3600);
    gitlab.tokens.set(old.accessToken, Date.now() - 1000);
    await t.rejects(provider.listRepositories({ ...account, secrets: { ...account.secrets, accessToken: old.accessToken } }), {
      failure: 'credentials',
      message: /^GitLab refused the token: .*expired/i,
    });
  });

  t.test("groupName keeps the group's projects (and its subgroups')", async t => {
    const repos = await provider.listRepositories({ ...account, settings: { ...account.settings, groupName: 'team' } });
    t.same(repos.map(r => `${r.owner}/${r.name}`).sort(), ['team/backend/api', 'team/backend/app', 'team/docs']);
  });

  t.test('gitlabInternalUrl is where Berth reaches the server', async t => {
    const credential = await provider.cloneCredential(
      { ...account, settings: { ...account.settings, gitlabUrl: 'https://gitlab.example.com', gitlabInternalUrl: gitlab.url } },
      { owner: 'team/backend', name: 'app' },
    );
    t.same([credential.baseUrl, credential.username], [`${gitlab.url}/`, 'oauth2']);
    t.equal(
      (await provider.listRepositories({ ...account, settings: { ...account.settings, gitlabUrl: 'https://gitlab.example.com', gitlabInternalUrl: gitlab.url } })).length,
      gitlab.projects.length,
    );
  });

  t.test('an account that never finished the OAuth flow says so', async t => {
    await t.rejects(provider.listRepositories({ settings: account.settings, secrets: {} }), { failure: 'credentials', message: /not authorized yet/ });
  });
});
