// A Gitea connection made the way a user makes one: gitea.create with the OAuth application, the
// peer's /api/providers/gitea/authorize (a signed state bound to the organization and the
// connection), Gitea's approval, then /api/providers/gitea/callback — the same handler as
// GitLab's — against Gitea on loopback; its secret and tokens sealed at rest and never answered;
// its repositories and branches listed, the token renewed when it expires, testConnection running
// a deploy's path; another organization's connection 404; and an application and a compose stack
// deployed from it on the real Docker engine, cloned with the OAuth token, which appears in no log.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer, signUpAdmin, otherOrganization, makeGitRepo, commitFiles, TEST_BASE_IMAGE } from '@berth/core/testing';
import { startFakeGitea } from '../../../providers/git-gitea/test/gitea-api.ts';
import { deployApplication, deployStack, ok } from './deploy-from.ts';

const run = promisify(execFile);

const gitea = await startFakeGitea(t);
const repo = await makeGitRepo({
  'docker-compose.yml': `services:\n  worker:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sleep", "3600"]\n`,
  Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN mkdir -p /www\nCMD ["sh", "-c", "echo from-gitea > /www/index.html && exec httpd -f -p 8080 -h /www"]\n`,
});
t.teardown(repo.cleanup);
await run('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(repo.dir, { VERSION: '2\n' });
await run('git', ['-C', repo.dir, 'checkout', '-q', 'main']);
await gitea.addGitRepo('team', 'app', repo.dir, { main: repo.commit, release });
await gitea.addGitRepo('team', 'site', repo.dir, { main: repo.commit });
await gitea.addGitRepo('alice', 'tools', repo.dir, { main: repo.commit });

const server = await startTestServer();
t.teardown(() => server.destroy());
const { client, apiKey, userId } = await signUpAdmin(server);
const sql = (q: string, p: unknown[]) => server.kernel.container.cradle.orm.em.getConnection().execute(q, p) as Promise<Record<string, any>[]>;

/** GET one of the peer's Gitea routes as the browser would (the caller's credential with it). */
const route = (path: string, query: Record<string, string>, key = apiKey) =>
  fetch(`${server.url}/api/providers/gitea/${path}?${new URLSearchParams(query)}`, { headers: { 'x-api-key': key }, redirect: 'manual' });

let giteaId = '';
let gitProviderId = '';

t.test('create, then authorize and the callback; the state binds it to the organization and the connection', async t => {
  const made = await ok(
    client.post('gitea.create', { name: 'Team Gitea', giteaUrl: gitea.url, clientId: gitea.app.clientId, clientSecret: gitea.app.clientSecret, redirectUri: gitea.app.redirectUri }),
    'gitea.create',
  );
  t.same(made, { giteaId: made.giteaId, clientId: gitea.app.clientId, giteaUrl: gitea.url }, "the peer's answer");
  giteaId = made.giteaId;
  const one = await ok(client.get('gitea.one', { giteaId }), 'gitea.one');
  gitProviderId = one.gitProviderId;
  t.match(one, { clientSecret: null, accessToken: null, refreshToken: null, expiresAt: null, gitProvider: { providerType: 'gitea', userId, name: 'Team Gitea' } });
  t.match((await client.get('gitea.giteaProviders', {})).body, [{ giteaId, gitProvider: { gitProviderId } }], 'listed once its OAuth application is set');

  const sent = await route('authorize', { giteaId });
  t.equal(sent.status, 307);
  const asked = new URL(sent.headers.get('location')!);
  t.equal(`${asked.origin}${asked.pathname}`, `${gitea.url}/login/oauth/authorize`);
  const state = asked.searchParams.get('state')!;
  t.same([asked.searchParams.get('client_id'), asked.searchParams.get('redirect_uri')], [gitea.app.clientId, gitea.app.redirectUri]);

  const other = await otherOrganization(server, userId);
  t.equal((await route('authorize', { giteaId }, other.client.apiKey!)).status, 404, "another organization's connection");
  t.equal((await route('callback', { code: gitea.authorize(gitea.app.redirectUri), state }, other.client.apiKey!)).status, 400, 'another organization');
  t.equal((await route('callback', { code: gitea.authorize(gitea.app.redirectUri), state: Buffer.from('v1:x:y:z').toString('base64url') })).status, 400, 'a forged state');
  // A GitLab authorization's state (another type) authorizes nothing here.
  const gl = await ok(client.post('gitlab.create', { authId: 'x', name: 'gl', gitlabUrl: gitea.url, applicationId: 'a', secret: 's' }), 'gitlab.create');
  const glState = (await ok(client.post('gitlab.authorization', { gitlabId: gl.gitlabId }), 'gitlab.authorization')).state;
  t.equal((await route('callback', { code: gitea.authorize(gitea.app.redirectUri), state: glState })).status, 400, "a GitLab connection's state");
  await ok(client.post('gitProvider.remove', { gitProviderId: gl.gitProviderId }), 'gitProvider.remove');
  t.equal((await fetch(`${server.url}/api/providers/gitea/callback?${new URLSearchParams({ code: 'x', state })}`, { redirect: 'manual' })).status, 401, 'no credential');
  t.equal((await route('callback', { code: 'not-a-code-gitea-issued', state })).status, 400, 'a code Gitea refuses');

  const done = await route('callback', { code: gitea.authorize(gitea.app.redirectUri), state });
  t.equal(done.status, 307, await done.clone().text());
  t.type((await client.get('gitea.one', { giteaId })).body.expiresAt, 'number', 'authorized: the token pair stored');
  t.equal((await client.get('gitea.getGiteaUrl', { giteaId })).body, gitea.url);
});

t.test('client secret and tokens are sealed at rest and in no answer', async t => {
  const [row] = await sql(
    `select secrets->>'clientSecret' as client_secret, secrets->>'accessToken' as access_token, secrets->>'refreshToken' as refresh_token from git_connections where connection_id = ?`,
    [giteaId],
  );
  for (const [k, v] of Object.entries(row!)) t.match(v, /^v1:/, `${k} is sealed`);
  const everything = JSON.stringify([(await client.get('gitProvider.getAll', {})).body, (await client.get('gitea.one', { giteaId })).body, (await client.get('gitea.giteaProviders', {})).body]);
  for (const secret of [gitea.app.clientSecret, ...gitea.tokens.keys(), ...gitea.refreshTokens]) t.notOk(everything.includes(secret), 'no answer carries a secret or token');
  const listed = (await client.get('gitProvider.getAll', {})).body.find((p: any) => p.gitProviderId === gitProviderId);
  t.match(listed, { isOwner: true, gitea: { giteaId, clientSecret: null, accessToken: null, refreshToken: null } });
});

t.test('repositories, branches and testConnection go through the token; an expiring token is renewed', async t => {
  const repos = await ok(client.get('gitea.getGiteaRepositories', { giteaId }), 'getGiteaRepositories');
  t.same(repos.map((r: any) => r.url).sort(), ['alice/tools', 'team/app', 'team/site'], 'every page');
  t.same(
    repos.find((r: any) => r.url === 'team/app'),
    { id: gitea.repos[0]!.id, name: 'app', url: 'team/app', owner: { username: 'team' } },
  );
  const branches = await ok(client.get('gitea.getGiteaBranches', { giteaId, owner: 'team', repositoryName: 'app' }), 'getGiteaBranches');
  t.same(
    branches.sort((a: any, b: any) => a.name.localeCompare(b.name)),
    [
      { id: 'main', name: 'main', commit: { id: repo.commit } },
      { id: 'release', name: 'release', commit: { id: release } },
    ],
  );
  t.equal((await client.get('gitea.getGiteaBranches', { owner: 'team', repositoryName: 'app' })).status, 400, 'giteaId is required, as the peer');
  const gitRequests = gitea.git.requests.length;
  t.equal((await client.post('gitea.testConnection', { giteaId })).body, 'Found 3 repositories');
  t.ok(
    gitea.git.requests.slice(gitRequests).some(r => r.authorization !== undefined),
    'git ls-remote ran with the credential',
  );
  t.type((await client.get('gitea.one', { giteaId })).body.lastAuthenticatedAt, 'number', 'lastAuthenticatedAt stamped, as the peer');
  t.equal((await client.post('gitea.testConnection', { giteaId, organizationName: 'team' })).body, 'Found 2 repositories', "organizationName filters the test's listing");
  t.equal((await client.post('gitea.testConnection', {})).status, 404, 'no giteaId names no connection');

  const [before] = await sql(`select secrets->>'accessToken' as access_token from git_connections where connection_id = ?`, [giteaId]);
  await ok(client.post('gitea.update', { giteaId, gitProviderId, name: 'Team Gitea', giteaUrl: gitea.url, expiresAt: Math.floor(Date.now() / 1000) + 60 }), 'gitea.update');
  t.equal((await client.get('gitea.getGiteaRepositories', { giteaId })).status, 200);
  const [after] = await sql(`select secrets->>'accessToken' as access_token, settings->>'expiresAt' as expires_at from git_connections where connection_id = ?`, [giteaId]);
  t.not(after!.access_token, before!.access_token, 'a new access token was stored');
  t.ok(Number(after!.expires_at) > Date.now() / 1000 + 3000, 'with its new expiry');

  const refused = await ok(client.post('gitea.create', { name: 'refused', giteaUrl: gitea.url, accessToken: 'not-a-token-gitea-issued' }), 'gitea.create');
  const reply = await client.post('gitea.testConnection', { giteaId: refused.giteaId });
  t.equal(reply.status, 400);
  t.match(reply.body.message, /^credentials: Gitea refused the token/);
  const bad = await client.post('gitea.update', { giteaId, gitProviderId, name: '', giteaUrl: '' });
  t.equal(bad.status, 400);
  t.same(bad.body.issues.map((i: any) => i.path.join('.')).sort(), ['giteaUrl', 'name']);
});

t.test("another organization's connection is 404 everywhere", async t => {
  const other = await otherOrganization(server, userId);
  const {
    body: { environment },
  } = await other.client.post('project.create', { name: 'Elsewhere' });
  const theirs = await ok(other.client.post('application.create', { name: 'theirs', environmentId: environment.environmentId }), 'application.create');
  t.equal(
    (await other.client.post('application.saveGiteaProvider', { applicationId: theirs.applicationId, giteaBranch: 'main', giteaBuildPath: '/', giteaOwner: 'team', giteaRepository: 'app', giteaId }))
      .status,
    404,
    'saveGiteaProvider',
  );
  const stack = await ok(other.client.post('compose.create', { name: 'theirs', environmentId: environment.environmentId, composeFile: 'services: {}\n' }), 'compose.create');
  t.equal((await other.client.post('compose.update', { composeId: stack.composeId, sourceType: 'gitea', giteaId })).status, 404, 'compose.update');
  for (const [op, input] of [
    ['gitea.one', { giteaId }],
    ['gitea.getGiteaRepositories', { giteaId }],
    ['gitea.getGiteaBranches', { giteaId, owner: 'team', repositoryName: 'app' }],
    ['gitea.getGiteaUrl', { giteaId }],
  ] as const) {
    t.equal((await other.client.get(op, input)).status, 404, op);
  }
  for (const [op, input] of [
    ['gitea.testConnection', { giteaId }],
    ['gitea.update', { giteaId, gitProviderId, name: 'x', giteaUrl: gitea.url }],
  ] as const) {
    t.equal((await other.client.post(op, input)).status, 404, op);
  }
  t.same((await other.client.get('gitea.giteaProviders', {})).body, []);
  t.equal((await client.get('gitea.one', { giteaId })).body.gitProvider.name, 'Team Gitea', 'unchanged');
});

t.test('an application and a compose stack deploy from the repository through the connection; the token is in no log', async t => {
  const { app, one, environmentId, deploy } = await deployApplication(t, client, {
    name: 'Gitea',
    serves: 'from-gitea',
    save: applicationId => client.post('application.saveGiteaProvider', { applicationId, giteaBranch: 'main', giteaBuildPath: '/', giteaOwner: 'team', giteaRepository: 'app', giteaId }),
  });
  t.equal(one.sourceType, 'gitea');
  t.match(one.gitea, { giteaId, gitProviderId, giteaUrl: gitea.url });
  t.notOk('accessToken' in one.gitea || 'clientSecret' in one.gitea, 'joined without secret or tokens');

  const gitRequests = gitea.git.requests.length;
  const { log } = await deploy();
  t.ok(
    gitea.git.requests.slice(gitRequests).some(r => r.path.includes('team/app.git') && r.authorization !== undefined),
    'the clone sent the credential',
  );
  t.match(log, new RegExp(repo.commit), 'the log names the commit');
  for (const token of gitea.tokens.keys()) {
    t.notOk(log.includes(token), 'no token in the log');
    t.notOk(log.includes(Buffer.from(`oauth2:${token}`).toString('base64')), 'nor the header that carries it');
  }

  const stack = await deployStack(t, client, { environmentId, name: 'gt', fields: { sourceType: 'gitea', giteaId, giteaOwner: 'team', giteaRepository: 'app', giteaBranch: 'release' } });
  t.match(stack.log, new RegExp(release), 'the stack was fetched from the release branch');
  for (const token of gitea.tokens.keys()) t.notOk(stack.log.includes(token), "no token in the stack's log");
  t.match(stack.one.gitea, { giteaId, gitProviderId });

  const refused = await client.post('gitProvider.remove', { gitProviderId });
  t.equal(refused.status, 409);
  t.match(refused.body.message, new RegExp(`application ${app.appName}`));
});
