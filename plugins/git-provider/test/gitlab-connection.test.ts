// A GitLab connection made the way a user makes one: gitlab.create with the OAuth application,
// gitlab.authorization, GitLab's approval, then the peer's callback /api/providers/gitlab/callback
// (a signed state bound to the organization and the connection) against GitLab on loopback used as
// a self-managed server; its secret and tokens sealed at rest and never answered; its projects and
// branches listed, the token renewed when it expires, testConnection running a deploy's path;
// another organization's connection 404; and an application and a compose stack deployed from it
// on the real Docker engine, cloned with the OAuth token, which appears in no log.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer, signUpAdmin, otherOrganization, makeGitRepo, commitFiles, TEST_BASE_IMAGE } from '@berth/core/testing';
import { startFakeGitlab } from '../../../providers/git-gitlab/test/gitlab-api.ts';
import { deployApplication, deployStack, ok } from './deploy-from.ts';

const run = promisify(execFile);

const gitlab = await startFakeGitlab(t);
const repo = await makeGitRepo({
  'docker-compose.yml': `services:\n  worker:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sleep", "3600"]\n`,
  Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN mkdir -p /www\nCMD ["sh", "-c", "echo from-gitlab > /www/index.html && exec httpd -f -p 8080 -h /www"]\n`,
});
t.teardown(repo.cleanup);
await run('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(repo.dir, { VERSION: '2\n' });
await run('git', ['-C', repo.dir, 'checkout', '-q', 'main']);
await gitlab.addGitProject('team/backend', 'app', repo.dir, { main: repo.commit, release });
const project = gitlab.projects[0]!;
for (const [ns, path] of [
  ['team', 'docs'],
  ['alice', 'tools'],
] as const) {
  gitlab.projects.push({ id: 2000 + gitlab.projects.length, namespace: ns, path, visibility: 'public', branches: { main: repo.commit } });
}

const server = await startTestServer();
t.teardown(() => server.destroy());
const { client, apiKey, userId } = await signUpAdmin(server);
const sql = (q: string, p: unknown[]) => server.kernel.container.cradle.orm.em.getConnection().execute(q, p) as Promise<Record<string, any>[]>;

/** GET the callback as the browser would after GitLab's redirect (the caller's credential with it). */
const callback = (query: Record<string, string>, key = apiKey) =>
  fetch(`${server.url}/api/providers/gitlab/callback?${new URLSearchParams(query)}`, { headers: { 'x-api-key': key }, redirect: 'manual' });

let gitlabId = '';
let gitProviderId = '';

t.test('create, then the OAuth authorization through the callback; its state binds it to the organization and the connection', async t => {
  const made = await ok(
    client.post('gitlab.create', {
      authId: 'someone-else',
      name: 'Team GitLab',
      gitlabUrl: gitlab.url,
      applicationId: gitlab.app.clientId,
      secret: gitlab.app.secret,
      redirectUri: gitlab.app.redirectUri,
      groupName: 'team',
    }),
    'gitlab.create',
  );
  ({ gitlabId, gitProviderId } = made);
  t.match(made, {
    gitlabUrl: gitlab.url,
    applicationId: gitlab.app.clientId,
    secret: null,
    accessToken: null,
    refreshToken: null,
    groupName: 'team',
    gitProvider: { providerType: 'gitlab', userId, name: 'Team GitLab' },
  });
  t.same((await client.get('gitlab.gitlabProviders', {})).body, [], 'not authorized yet');

  const { state, authorizeUrl } = await ok(client.post('gitlab.authorization', { gitlabId }), 'gitlab.authorization');
  const asked = new URL(authorizeUrl);
  t.equal(`${asked.origin}${asked.pathname}`, `${gitlab.url}/oauth/authorize`);
  const redirectUri = `${gitlab.app.redirectUri}?gitlabId=${gitlabId}`;
  t.same([asked.searchParams.get('client_id'), asked.searchParams.get('redirect_uri'), asked.searchParams.get('state')], [gitlab.app.clientId, redirectUri, state]);

  // Another organization cannot complete it, a forged state or another connection's names nothing, nobody signed in gets 401.
  const other = await otherOrganization(server, userId);
  t.equal((await callback({ code: gitlab.authorize(redirectUri), gitlabId, state }, other.client.apiKey!)).status, 400, 'another organization');
  t.equal((await callback({ code: gitlab.authorize(redirectUri), gitlabId, state: Buffer.from('v1:x:y:z').toString('base64url') })).status, 400, 'a forged state');
  const second = await ok(client.post('gitlab.create', { authId: 'x', name: 'second', gitlabUrl: gitlab.url, applicationId: gitlab.app.clientId, secret: gitlab.app.secret }), 'gitlab.create');
  t.equal((await callback({ code: gitlab.authorize(redirectUri), gitlabId: second.gitlabId, state })).status, 400, "another connection's state");
  t.equal((await fetch(`${server.url}/api/providers/gitlab/callback?${new URLSearchParams({ code: 'x', gitlabId, state })}`, { redirect: 'manual' })).status, 401, 'no credential');
  t.equal((await callback({ code: 'not-a-code-gitlab-issued', gitlabId, state })).status, 400, 'a code GitLab refuses');
  t.equal((await client.post('gitProvider.remove', { gitProviderId: second.gitProviderId })).status, 200);

  const done = await callback({ code: gitlab.authorize(redirectUri), gitlabId, state });
  t.equal(done.status, 307, await done.clone().text());
  t.match((await client.get('gitlab.gitlabProviders', {})).body, [{ gitlabId, gitlabUrl: gitlab.url, gitProvider: { gitProviderId } }]);
  t.type((await client.get('gitlab.one', { gitlabId })).body.expiresAt, 'number');
});

t.test('secret and tokens are sealed at rest and in no answer', async t => {
  const [row] = await sql(`select secrets->>'secret' as secret, secrets->>'accessToken' as access_token, secrets->>'refreshToken' as refresh_token from git_connections where connection_id = ?`, [
    gitlabId,
  ]);
  for (const [k, v] of Object.entries(row!)) t.match(v, /^v1:/, `${k} is sealed`);
  const everything = JSON.stringify([(await client.get('gitProvider.getAll', {})).body, (await client.get('gitlab.one', { gitlabId })).body, (await client.get('gitlab.gitlabProviders', {})).body]);
  for (const secret of [gitlab.app.secret, ...gitlab.tokens.keys(), ...gitlab.refreshTokens]) t.notOk(everything.includes(secret), 'no answer carries a secret or token');
  const listed = (await client.get('gitProvider.getAll', {})).body.find((p: any) => p.gitProviderId === gitProviderId);
  t.match(listed, { isOwner: true, github: null, gitlab: { gitlabId, secret: null, accessToken: null, refreshToken: null } });
});

t.test('projects, branches and testConnection go through the token; an expiring token is renewed', async t => {
  const repos = await ok(client.get('gitlab.getGitlabRepositories', { gitlabId }), 'getGitlabRepositories');
  t.same(repos.map((r: any) => r.url).sort(), ['team/backend/app', 'team/docs'], 'every page, the group filter applied');
  t.same(
    repos.find((r: any) => r.name === 'app'),
    { id: project.id, name: 'app', url: 'team/backend/app', owner: { username: 'backend' } },
  );
  const branches = await ok(client.get('gitlab.getGitlabBranches', { gitlabId, owner: 'backend', repo: 'app', id: project.id }), 'getGitlabBranches');
  t.same(
    branches.sort((a: any, b: any) => a.name.localeCompare(b.name)),
    [
      { name: 'main', commit: { id: repo.commit } },
      { name: 'release', commit: { id: release } },
    ],
  );
  t.same((await client.get('gitlab.getGitlabBranches', { gitlabId, owner: 'backend', repo: 'app' })).body, [], 'no project id, no branches (as the peer)');
  const gitRequests = gitlab.git.requests.length;
  t.equal((await client.post('gitlab.testConnection', { gitlabId })).body, 'Found 2 repositories');
  t.ok(
    gitlab.git.requests.slice(gitRequests).some(r => r.authorization !== undefined),
    'git ls-remote ran with the credential',
  );
  t.equal((await client.post('gitlab.testConnection', { gitlabId, groupName: 'team/backend' })).body, 'Found 1 repositories', "groupName filters the test's listing");
  t.equal((await client.post('gitlab.testConnection', {})).status, 404, 'no gitlabId names no connection');

  // The token expires within the margin: the next use renews it and stores the new pair, sealed.
  const [before] = await sql(`select secrets->>'accessToken' as access_token from git_connections where connection_id = ?`, [gitlabId]);
  await ok(client.post('gitlab.update', { gitlabId, gitProviderId, name: 'Team GitLab', expiresAt: Math.floor(Date.now() / 1000) + 60 }), 'gitlab.update');
  t.equal((await client.get('gitlab.getGitlabRepositories', { gitlabId })).status, 200);
  const [after] = await sql(`select secrets->>'accessToken' as access_token, settings->>'expiresAt' as expires_at from git_connections where connection_id = ?`, [gitlabId]);
  t.not(after!.access_token, before!.access_token, 'a new access token was stored');
  t.ok(Number(after!.expires_at) > Date.now() / 1000 + 3600, 'with its new expiry');

  // The older variant carries tokens itself: one GitLab refuses fails with the step named.
  const refused = await ok(client.post('gitlab.create', { authId: 'x', name: 'refused', gitlabUrl: gitlab.url, accessToken: 'not-a-token-gitlab-issued', refreshToken: 'r' }), 'gitlab.create (older)');
  const reply = await client.post('gitlab.testConnection', { gitlabId: refused.gitlabId });
  t.equal(reply.status, 400);
  t.match(reply.body.message, /^credentials: GitLab refused the token/);
  t.equal((await client.post('gitProvider.remove', { gitProviderId: refused.gitProviderId })).status, 200);
  const bad = await client.post('gitlab.update', { gitlabId, gitProviderId, name: '', gitlabUrl: 'x'.repeat(300) });
  t.equal(bad.status, 400);
  t.same(bad.body.issues.map((i: any) => i.path.join('.')).sort(), ['gitlabUrl', 'name']);
});

t.test("another organization's connection is 404 everywhere", async t => {
  const other = await otherOrganization(server, userId);
  const {
    body: { environment },
  } = await other.client.post('project.create', { name: 'Elsewhere' });
  const theirs = await ok(other.client.post('application.create', { name: 'theirs', environmentId: environment.environmentId }), 'application.create');
  t.equal(
    (
      await other.client.post('application.saveGitlabProvider', {
        applicationId: theirs.applicationId,
        gitlabBranch: 'main',
        gitlabBuildPath: '/',
        gitlabOwner: 'backend',
        gitlabRepository: 'app',
        gitlabId,
        gitlabPathNamespace: 'team/backend/app',
        gitlabProjectId: project.id,
      })
    ).status,
    404,
    'saveGitlabProvider',
  );
  const stack = await ok(other.client.post('compose.create', { name: 'theirs', environmentId: environment.environmentId, composeFile: 'services: {}\n' }), 'compose.create');
  t.equal((await other.client.post('compose.update', { composeId: stack.composeId, sourceType: 'gitlab', gitlabId })).status, 404, 'compose.update');
  for (const [op, input] of [
    ['gitlab.one', { gitlabId }],
    ['gitlab.getGitlabRepositories', { gitlabId }],
    ['gitlab.getGitlabBranches', { gitlabId, owner: 'backend', repo: 'app', id: project.id }],
  ] as const) {
    t.equal((await other.client.get(op, input)).status, 404, op);
  }
  for (const [op, input] of [
    ['gitlab.testConnection', { gitlabId }],
    ['gitlab.update', { gitlabId, gitProviderId, name: 'x' }],
    ['gitlab.authorization', { gitlabId }],
  ] as const) {
    t.equal((await other.client.post(op, input)).status, 404, op);
  }
  t.same((await other.client.get('gitlab.gitlabProviders', {})).body, []);
  t.equal((await client.get('gitlab.one', { gitlabId })).body.gitProvider.name, 'Team GitLab', 'unchanged');
});

t.test('an application and a compose stack deploy from the project through the connection; the token is in no log', async t => {
  const { app, one, environmentId, deploy } = await deployApplication(t, client, {
    name: 'GitLab',
    serves: 'from-gitlab',
    save: applicationId =>
      client.post('application.saveGitlabProvider', {
        applicationId,
        gitlabBranch: 'main',
        gitlabBuildPath: '/',
        gitlabOwner: 'backend',
        gitlabRepository: 'app',
        gitlabId,
        gitlabPathNamespace: 'team/backend/app',
        gitlabProjectId: project.id,
      }),
  });
  t.equal(one.sourceType, 'gitlab');
  t.match(one.gitlab, { gitlabId, gitProviderId, gitlabUrl: gitlab.url });
  t.notOk('accessToken' in one.gitlab, 'joined without tokens');

  const gitRequests = gitlab.git.requests.length;
  const { log } = await deploy();
  t.ok(
    gitlab.git.requests.slice(gitRequests).some(r => r.path.includes('team/backend/app.git') && r.authorization !== undefined),
    'the clone sent the credential',
  );
  t.match(log, new RegExp(repo.commit), 'the log names the commit');
  for (const token of gitlab.tokens.keys()) {
    t.notOk(log.includes(token), 'no token in the log');
    t.notOk(log.includes(Buffer.from(`oauth2:${token}`).toString('base64')), 'nor the header that carries it');
  }

  const stack = await deployStack(t, client, {
    environmentId,
    name: 'gl',
    fields: { sourceType: 'gitlab', gitlabId, gitlabPathNamespace: 'team/backend/app', gitlabOwner: 'backend', gitlabRepository: 'app', gitlabBranch: 'release', gitlabProjectId: project.id },
  });
  t.match(stack.log, new RegExp(release), 'the stack was fetched from the release branch');
  for (const token of gitlab.tokens.keys()) t.notOk(stack.log.includes(token), "no token in the stack's log");
  t.match(stack.one.gitlab, { gitlabId, gitProviderId });

  const refused = await client.post('gitProvider.remove', { gitProviderId });
  t.equal(refused.status, 409);
  t.match(refused.body.message, new RegExp(`application ${app.appName}`));
});
