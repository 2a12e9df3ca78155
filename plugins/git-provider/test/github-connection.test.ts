// A GitHub App connection made the way a user makes one: github.setupState, the manifest flow's
// return to /api/providers/github/setup (the code converted by GitHub on loopback, used as a GitHub
// Enterprise URL), then the installation through github.installState's sealed state (a forged, expired,
// another caller's or the peer's plain state installs nothing); its secrets sealed at rest and never answered; its
// repositories and branches listed, testConnection running a deploy's path; another organization's
// connection 404; and an application deployed from it on the real Docker engine, cloned with a
// token minted for the deploy that appears in no log.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, addMember, otherOrganization, makeGitRepo, commitFiles, deploymentFinished, deploymentIdOf, freePort, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';
import { startFakeGithub } from '../../../providers/git-github/test/github-api.ts';

const run = promisify(execFile);
const docker = new Docker();
const keyPair = () => generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
const appKey = keyPair();

const github = await startFakeGithub(t, { publicKeyPem: appKey.publicKey, privateKeyPem: appKey.privateKey, appId: '4242', installationId: 77 });
const repo = await makeGitRepo({
  'docker-compose.yml': `services:\n  worker:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sleep", "3600"]\n`,
  Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN mkdir -p /www\nCMD ["sh", "-c", "cat /www/index.html >/dev/null 2>&1; echo from-github > /www/index.html && exec httpd -f -p 8080 -h /www"]\n`,
});
t.teardown(repo.cleanup);
await run('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(repo.dir, { VERSION: '2\n' });
await run('git', ['-C', repo.dir, 'checkout', '-q', 'main']);
await github.addGitRepository('team', 'app', repo.dir, { main: repo.commit, release });
for (const [owner, name] of [
  ['team', 'api'],
  ['alice', 'tools'],
] as const) {
  github.repositories.push({ id: 2000 + github.repositories.length, owner, name, private: false, defaultBranch: 'main', branches: { main: repo.commit } });
}

const server = await startTestServer();
t.teardown(() => server.destroy());
const { client, apiKey, userId, organizationId } = await signUpAdmin(server);

const ok = async (r: Promise<{ status: number; body: any }>, what: string) => {
  const reply = await r;
  if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
};
/** GET the setup route as the browser would after GitHub's redirect (the caller's credential with it). */
const setup = (query: Record<string, string>, key = apiKey) => fetch(`${server.url}/api/providers/github/setup?${new URLSearchParams(query)}`, { headers: { 'x-api-key': key }, redirect: 'manual' });

let githubId = '';
let gitProviderId = '';

t.test('the manifest flow makes the connection; its state binds it to the organization', async t => {
  const { state, setupUrl } = await ok(client.post('github.setupState', { githubUrl: github.url }), 'github.setupState');
  t.match(state, /^gh_init:/);
  t.match(setupUrl, /\/api\/providers\/github\/setup$/);
  t.notMatch(state, new RegExp(github.url.replace(/[.:/]/g, '\\$&')), 'the state does not show what it binds');

  // Another organization cannot complete this organization's flow, a forged state names none, nobody signed in gets 401.
  const other = await otherOrganization(server, userId);
  t.equal((await setup({ code: github.manifestCode(), state }, other.client.apiKey!)).status, 400, "another organization's state");
  t.equal((await setup({ code: github.manifestCode(), state: `gh_init:${Buffer.from('v1:x:y:z').toString('base64url')}` })).status, 400, 'a forged state');
  t.equal((await fetch(`${server.url}/api/providers/github/setup?${new URLSearchParams({ code: 'x', state })}`, { redirect: 'manual' })).status, 401, 'no credential');
  t.same((await other.client.get('gitProvider.getAll', {})).body, [], 'nothing was made for the other organization');

  const made = await setup({ code: github.manifestCode(), state });
  t.equal(made.status, 307);
  githubId = new URL(made.headers.get('location')!, server.url).searchParams.get('githubId')!;
  t.ok(githubId, 'the new connection is named in the redirect');
  let one = await ok(client.get('github.one', { githubId }), 'github.one');
  t.equal(one.githubInstallationId, null, 'not installed yet');
  t.same((await client.get('github.githubProviders', {})).body, [], 'not configured before the installation');

  // The installation: github.installState answers the App's installation page with a state sealed to
  // the caller and this connection; GitHub sends the user back with it and the installation id.
  const install = await ok(client.post('github.installState', { githubId }), 'github.installState');
  t.match(install.state, /^gh_setup:/);
  t.equal(install.installUrl, `${github.url}/apps/berth-test-app/installations/new?${new URLSearchParams({ state: install.state })}`);
  t.notOk(install.state.includes(githubId), 'the state does not show the connection');
  const installer = await addMember(server, client, 'installer@example.com', 'member', undefined, 'apiKey');
  t.equal((await installer.client.post('github.installState', { githubId })).status, 403, "a member gets no state for another member's unshared connection");
  const { secrets } = server.kernel.container.cradle;
  const sealed = (o: Record<string, unknown>) => `gh_setup:${Buffer.from(secrets.encrypt(JSON.stringify(o))).toString('base64url')}`;
  const refused: [string, Record<string, string>, string?][] = [
    ["the peer's plain state (anyone who knows the id could make it)", { state: `gh_setup:${githubId}`, installation_id: '77' }],
    ['a forged state', { state: `gh_setup:${Buffer.from(JSON.stringify({ g: githubId, o: organizationId, u: userId, exp: Date.now() + 60_000 })).toString('base64url')}`, installation_id: '77' }],
    ["an expired one, sealed with the instance's key", { state: sealed({ g: githubId, o: organizationId, u: userId, exp: Date.now() - 1000 }), installation_id: '77' }],
    ["the admin's state, followed by another member (a link sent to them)", { state: install.state, installation_id: '77' }, installer.apiKey],
    ["the admin's state, followed in another organization", { state: install.state, installation_id: '77' }, other.client.apiKey!],
  ];
  for (const [what, query, key] of refused) t.equal((await setup(query, key)).status, 400, what);
  t.equal((await client.get('github.one', { githubId })).body.githubInstallationId, null, 'none of them installed anything');
  t.equal((await setup({ state: install.state, installation_id: '77' })).status, 307, 'the caller, with the state issued to them, completes it');
  one = await ok(client.get('github.one', { githubId }), 'github.one');
  gitProviderId = one.gitProviderId;
  t.match(one, {
    githubId,
    githubAppId: 4242,
    githubAppName: `${github.url}/apps/berth-test-app`,
    githubInstallationId: '77',
    githubUrl: github.url,
    githubPrivateKey: null,
    githubClientSecret: null,
    githubWebhookSecret: null,
    gitProvider: { gitProviderId, name: 'Berth test app', providerType: 'github', userId, sharedWithOrganization: false },
  });
});

t.test('secrets are sealed at rest and in no answer', async t => {
  const rows: Record<string, string>[] = await server.kernel.container.cradle.orm.em
    .getConnection()
    .execute(
      `select secrets->>'githubPrivateKey' as github_private_key, secrets->>'githubClientSecret' as github_client_secret, secrets->>'githubWebhookSecret' as github_webhook_secret from git_connections where connection_id = ?`,
      [githubId],
    );
  for (const [k, v] of Object.entries(rows[0]!)) t.match(v, /^v1:/, `${k} is sealed`);
  const everything = JSON.stringify([(await client.get('gitProvider.getAll', {})).body, (await client.get('github.one', { githubId })).body, (await client.get('github.githubProviders', {})).body]);
  for (const secret of ['BEGIN RSA PRIVATE KEY', 'manifest-client-secret', 'manifest-webhook-secret']) t.notOk(everything.includes(secret), `no answer carries ${secret}`);
  const [listed] = (await client.get('gitProvider.getAll', {})).body;
  t.match(listed, { gitProviderId, isOwner: true, github: { githubId, isConfigured: true, githubPrivateKey: null }, gitlab: null, bitbucket: null, gitea: null });
});

t.test('repositories, branches and testConnection go through the App', async t => {
  const repos = await ok(client.get('github.getGithubRepositories', { githubId }), 'getGithubRepositories');
  t.same(repos.map((r: any) => r.full_name).sort(), ['alice/tools', 'team/api', 'team/app'], 'every page');
  t.match(
    repos.find((r: any) => r.name === 'app'),
    { owner: { login: 'team' }, clone_url: `${github.url}/team/app.git`, private: true },
  );
  const branches = await ok(client.get('github.getGithubBranches', { githubId, owner: 'team', repo: 'app' }), 'getGithubBranches');
  t.same(
    branches.sort((a: any, b: any) => a.name.localeCompare(b.name)),
    [
      { name: 'main', commit: { sha: repo.commit } },
      { name: 'release', commit: { sha: release } },
    ],
  );
  t.same((await client.get('github.getGithubBranches', { owner: 'team', repo: 'app' })).body, [], 'no connection, no branches (as the peer)');
  const minted = github.minted.length;
  t.equal((await client.post('github.testConnection', { githubId })).body, 'Found 3 repositories');
  t.ok(github.minted.length > minted, 'a token was minted for the clone path too');
  t.ok(
    github.git.requests.some(r => r.path.includes('team/app.git') && r.authorization !== undefined),
    'git ls-remote reached the repository with the credential',
  );

  // A connection whose key GitHub refuses: the step is named.
  const other = keyPair();
  const bad = await server.kernel.container.cradle.gitProviders.createConnection(
    'github',
    {
      name: 'wrong key',
      githubAppName: null,
      githubAppId: 4242,
      githubClientId: null,
      githubClientSecret: null,
      githubWebhookSecret: null,
      githubPrivateKey: other.privateKey,
      githubInstallationId: '77',
      githubUrl: github.url,
    },
    organizationId,
    userId,
    server.kernel.container.cradle.orm.em.fork(),
  );
  const refused = await client.post('github.testConnection', { githubId: bad.githubId });
  t.equal(refused.status, 400);
  t.match(refused.body.message, /^credentials: GitHub refused the App's credentials/);
  t.equal((await client.post('gitProvider.remove', { gitProviderId: bad.gitProviderId })).status, 200);
});

t.test("another organization's connection is 404 everywhere", async t => {
  const other = await otherOrganization(server, userId);
  // A workload of the other organization cannot name this organization's connection either.
  const {
    body: { environment },
  } = await other.client.post('project.create', { name: 'Elsewhere' });
  const theirs = await ok(other.client.post('application.create', { name: 'theirs', environmentId: environment.environmentId }), 'application.create');
  t.equal(
    (await other.client.post('application.saveGithubProvider', { applicationId: theirs.applicationId, owner: 'team', repository: 'app', branch: 'main', githubId })).status,
    404,
    'saveGithubProvider',
  );
  const stack = await ok(other.client.post('compose.create', { name: 'theirs', environmentId: environment.environmentId, composeFile: 'services: {}\n' }), 'compose.create');
  t.equal((await other.client.post('compose.update', { composeId: stack.composeId, sourceType: 'github', githubId })).status, 404, 'compose.update');
  for (const [op, input] of [
    ['github.one', { githubId }],
    ['github.getGithubRepositories', { githubId }],
    ['github.getGithubBranches', { githubId, owner: 'team', repo: 'app' }],
  ] as const)
    t.equal((await other.client.get(op, input)).status, 404, op);
  for (const [op, input] of [
    ['github.testConnection', { githubId }],
    ['github.update', { githubId, gitProviderId, name: 'x', githubAppName: 'x' }],
    ['gitProvider.remove', { gitProviderId }],
    ['gitProvider.toggleShare', { gitProviderId, sharedWithOrganization: true }],
  ] as const)
    t.equal((await other.client.post(op, input)).status, 404, op);
  t.same((await other.client.get('github.githubProviders', {})).body, []);
  t.equal((await client.get('github.one', { githubId })).body.gitProvider.name, 'Berth test app', 'unchanged');
});

t.test('update and toggleShare', async t => {
  t.equal((await client.post('github.update', { githubId, gitProviderId, name: 'Team GitHub', githubAppName: 'team-app' })).body, true);
  t.match((await client.get('github.one', { githubId })).body, { githubAppName: 'team-app', gitProvider: { name: 'Team GitHub' } });
  t.match((await client.post('gitProvider.toggleShare', { gitProviderId, sharedWithOrganization: true })).body, { sharedWithOrganization: true });
  const bad = await client.post('github.update', { githubId, gitProviderId, name: '', githubAppName: 'x'.repeat(300) });
  t.equal(bad.status, 400);
  t.same(bad.body.issues.map((i: any) => i.path.join('.')).sort(), ['githubAppName', 'name']);
});

t.test('an application deploys from the repository through the connection; the token is in no log', async t => {
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'From GitHub' });
  const app = await ok(client.post('application.create', { name: 'gh', environmentId: environment.environmentId }), 'application.create');
  t.teardown(() =>
    docker
      .getService(app.appName)
      .remove()
      .catch(() => undefined),
  );
  const port = await freePort();
  await ok(client.post('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' }), 'port.create');
  await ok(client.post('application.update', { applicationId: app.applicationId, stopGracePeriodSwarm: 1_000_000_000 }), 'application.update');
  t.equal((await client.post('application.saveGithubProvider', { applicationId: app.applicationId, owner: 'team', repository: 'app', branch: 'main', buildPath: '/', githubId })).body, true);
  await ok(client.post('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' }), 'saveBuildType');
  const one = (await client.get('application.one', { applicationId: app.applicationId })).body;
  t.equal(one.sourceType, 'github');
  t.same(
    one.github,
    { githubId, gitProviderId, githubAppName: 'team-app', githubAppId: 4242, githubClientId: one.github?.githubClientId, githubInstallationId: '77', githubUrl: github.url },
    'joined as the peer joins it, without secrets',
  );
  t.type(one.github?.githubClientId, 'string');

  const minted = github.minted.length;
  const reply = await client.post('application.deploy', { applicationId: app.applicationId });
  const done = await deploymentFinished(client, deploymentIdOf(reply));
  t.equal(done.status, 'done', done.errorMessage ?? '');
  const served = await waitFor(
    `port ${port}`,
    async () => {
      const r = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      return r?.ok ? r.text() : undefined;
    },
    { timeout: 30_000, interval: 200 },
  );
  t.equal(served.trim(), 'from-github');
  const tokens = github.minted.slice(minted);
  t.ok(tokens.length >= 1, 'a token was minted for the deploy');
  const log = (await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string;
  t.match(log, new RegExp(repo.commit), 'the log names the commit');
  for (const token of tokens) {
    t.notOk(log.includes(token), 'the token is not in the log');
    t.notOk(log.includes(Buffer.from(`x-access-token:${token}`).toString('base64')), 'nor the header that carries it');
  }
  t.ok(
    github.git.requests.some(r => r.path.includes('team/app.git') && r.authorization !== undefined),
    'the clone sent the minted credential',
  );

  // A compose stack sets the same fields through compose.update and deploys from the same repository.
  const appName = `gh-stack-${Date.now().toString(36)}`;
  const stack = await ok(client.post('compose.create', { name: 'gh stack', environmentId: environment.environmentId, appName }), 'compose.create');
  t.teardown(() => client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
  await ok(
    client.post('compose.update', { composeId: stack.composeId, sourceType: 'github', githubId, owner: 'team', repository: 'app', branch: 'release', composePath: './docker-compose.yml' }),
    'compose.update',
  );
  const before = github.minted.length;
  const stackRun = await deploymentFinished(client, deploymentIdOf(await client.post('compose.deploy', { composeId: stack.composeId })));
  t.equal(stackRun.status, 'done', stackRun.errorMessage ?? '');
  const stackLog = (await client.get('deployment.readLogs', { deploymentId: stackRun.deploymentId })).body as string;
  t.match(stackLog, new RegExp(release), 'the stack was fetched from the release branch');
  for (const token of github.minted.slice(before)) t.notOk(stackLog.includes(token), "no token in the stack's log");
  t.match((await client.get('compose.one', { composeId: stack.composeId })).body.github, { githubId, gitProviderId });

  // The connection is in use: remove is refused, naming the application.
  const refused = await client.post('gitProvider.remove', { gitProviderId });
  t.equal(refused.status, 409);
  t.match(refused.body.message, new RegExp(`application ${app.appName}`));
});
