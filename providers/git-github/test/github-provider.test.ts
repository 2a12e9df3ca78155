// The GitHub provider against GitHub on loopback (test/github-api.ts) used as a GitHub Enterprise
// URL: the contract's shared suite, then what is GitHub's own — the App's JWT signed with its key,
// an installation token minted for every use, and the SDKs loaded only once an account is used.
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerHooks } from 'node:module';
import { promisify } from 'node:util';
import t from 'tap';
import type { GitAccount, GitProvider } from '@berth/core';
import { commitFiles, gitProviderConformance, makeGitRepo } from '@berth/core/testing';
import { startFakeGithub } from './github-api.ts';

// Which @octokit modules this process loads, and when.
const loaded: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('@octokit/')) loaded.push(specifier);
    return next(specifier, context);
  },
});
const { default: descriptor, GithubProvider, apiUrlOf } = await import('../src/index.ts');

const run = promisify(execFile);
const keyPair = () => generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
const appKey = keyPair();
const otherKey = keyPair();

const github = await startFakeGithub(t, { publicKeyPem: appKey.publicKey, privateKeyPem: appKey.privateKey, appId: '4242', installationId: 77 });
// team/app is a real repository with three branches (two pages); the other four are listed only.
const app = await makeGitRepo({ Dockerfile: 'FROM scratch\n' });
t.teardown(app.cleanup);
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(app.dir, { VERSION: '2\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'feature/x']);
const feature = await commitFiles(app.dir, { 'x.txt': 'x\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', 'main']);
const branches = { main: app.commit, release, 'feature/x': feature };
await github.addGitRepository('team', 'app', app.dir, branches);
for (const [owner, name] of [
  ['team', 'api'],
  ['team', 'docs'],
  ['alice', 'tools'],
  ['alice', 'dotfiles'],
] as const) {
  github.repositories.push({ id: 2000 + github.repositories.length, owner, name, private: false, defaultBranch: 'main', branches: { main: app.commit } });
}

// Pull request #7 of team/app, from a fork by "forker", who may push to team/app ("reader" may only read).
github.pullRequests.set('team/app#7', { head: 'alice/tools', branch: 'feature/x', sha: feature, base: 'main', author: { id: 51, login: 'forker' }, state: 'open' });
github.permissions.set(
  'team/app',
  new Map([
    ['forker', 'write'],
    ['reader', 'read'],
  ]),
);

const account: GitAccount = { settings: { githubUrl: github.url, githubAppId: github.appId, githubInstallationId: github.installationId }, secrets: { githubPrivateKey: appKey.privateKey } };
const refusedAccount: GitAccount = { ...account, secrets: { githubPrivateKey: otherKey.privateKey } };

t.test('the descriptor loads no SDK; the first use of an account does', async t => {
  const provider = await descriptor.create({}, { config: {} as never });
  t.same(loaded, [], 'enabling the provider imports no @octokit module');
  await provider.connect(account);
  t.ok(loaded.includes('@octokit/rest') && loaded.includes('@octokit/auth-app'), `the first call imports them (${[...new Set(loaded)].join(', ')})`);
});

gitProviderConformance(t, descriptor, {
  account,
  refusedAccount,
  repositories: github.repositories.map(r => `${r.owner}/${r.name}`),
  repository: { owner: 'team', name: 'app' },
  branches: Object.entries(branches).map(([name, commit]) => ({ name, commit })),
  pullRequest: 7,
  pullRequestHeld: { number: 7, state: 'open', headRepository: 'alice/tools', headBranch: 'feature/x', headSha: feature, baseBranch: 'main', author: { id: '51', login: 'forker' } },
  writeAccess: { writer: { id: '51', login: 'forker' }, reader: { id: '52', login: 'reader' }, stranger: { id: '53', login: 'stranger' } },
  service: {
    webhooks: repo => (github.webhooks.get(`${repo.owner}/${repo.name}`) ?? []).map(h => ({ id: h.id, url: h.url })),
    comments: (repo, n) => github.comments.get(`${repo.owner}/${repo.name}#${n}`) ?? [],
  },
});

t.test("GitHub's own rules", async t => {
  const provider: GitProvider = new GithubProvider();

  t.test('the App signs in with its JWT and mints an installation token for every use', async t => {
    const before = { minted: github.minted.length, refused: github.jwts.refused };
    const a = await provider.cloneCredential(account, { owner: 'team', name: 'app' });
    const b = await provider.cloneCredential(account, { owner: 'team', name: 'app' });
    t.equal(github.minted.length, before.minted + 2, 'two uses, two tokens minted');
    t.not(a.password, b.password, 'never the same token twice');
    t.same([a.username, a.baseUrl], ['x-access-token', `${github.url}/`], "basic auth for the server's web host");
    t.ok(a.expiresAt && a.expiresAt.getTime() > Date.now() + 50 * 60_000, "the token's expiry, as GitHub gave it");
    t.equal(github.jwts.refused, before.refused, "every JWT verified with the App's public key");
    await t.rejects(provider.cloneCredential(refusedAccount, { owner: 'team', name: 'app' }), { failure: 'credentials', message: /^GitHub refused the App's credentials: Bad credentials/ });
    t.equal(github.jwts.refused, before.refused + 1, 'a JWT signed with another key is refused by the server');
  });

  t.test("the App manifest flow: a one-time code becomes the App's credentials, which then work", async t => {
    const github$ = new GithubProvider();
    const code = github.manifestCode();
    const created = await github$.convertManifest(`${github.url}/`, code);
    t.same(
      { ...created, githubPrivateKey: created.githubPrivateKey === appKey.privateKey },
      {
        name: 'Berth test app',
        githubAppName: `${github.url}/apps/berth-test-app`,
        githubAppId: 4242,
        githubClientId: created.githubClientId,
        githubClientSecret: 'manifest-client-secret',
        githubWebhookSecret: 'manifest-webhook-secret',
        githubPrivateKey: true,
        githubUrl: github.url,
      },
      "the peer's record fields, the private key as GitHub gave it",
    );
    t.match(created.githubClientId, /^Iv1\./, "the client id of GitHub's example");
    const fromManifest: GitAccount = {
      settings: { githubUrl: created.githubUrl, githubAppId: created.githubAppId, githubInstallationId: github.installationId },
      secrets: { githubPrivateKey: created.githubPrivateKey },
    };
    t.same(await provider.connect(fromManifest), { settings: { githubAppName: 'berth-test-app' }, secrets: {} }, 'the converted App connects');
    await t.rejects(github$.convertManifest(github.url, code), { failure: 'connect', message: /^GitHub: not found/ }, 'a code converts once');
  });

  t.test('webhooks are registered for pushes, signed with the secret', async t => {
    const hook = await provider.registerWebhook(account, { owner: 'team', name: 'app' }, { url: 'https://berth.example.com/api/deploy/github', secret: 's3cret-hook' });
    t.same(
      github.webhooks.get('team/app')?.find(h => h.id === hook.id),
      { id: hook.id, url: 'https://berth.example.com/api/deploy/github', secret: 's3cret-hook', events: ['push'] },
    );
    await provider.removeWebhook(account, { owner: 'team', name: 'app' }, hook.id);
  });

  t.test('an account that is not complete, or a repository that does not exist, says so', async t => {
    await t.rejects(provider.listRepositories({ settings: { ...account.settings, githubInstallationId: null }, secrets: account.secrets }), {
      failure: 'credentials',
      message: 'GitHub: the App is not installed (no githubInstallationId)',
    });
    await t.rejects(provider.listRepositories({ settings: account.settings, secrets: {} }), { failure: 'credentials', message: 'GitHub: the account has no App private key (githubPrivateKey)' });
    await t.rejects(provider.listBranches(account, { owner: 'team', name: 'nope' }), { failure: 'branches', message: /^GitHub: not found/ });
    const nobody = http.createServer();
    await new Promise<void>(resolve => nobody.listen(0, '127.0.0.1', resolve));
    const closedPort = (nobody.address() as AddressInfo).port;
    await new Promise(resolve => nobody.close(resolve));
    await t.rejects(provider.listRepositories({ ...account, settings: { ...account.settings, githubUrl: `http://127.0.0.1:${closedPort}` } }), {
      failure: 'connect',
      message: 'GitHub cannot be reached: ECONNREFUSED',
    });
  });

  t.test("github.com's API is api.github.com; an Enterprise server's is below /api/v3", async t => {
    t.equal(apiUrlOf('https://github.com'), 'https://api.github.com');
    t.equal(apiUrlOf('https://ghe.example.com'), 'https://ghe.example.com/api/v3');
  });
});
