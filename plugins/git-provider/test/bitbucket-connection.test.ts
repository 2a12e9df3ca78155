// A Bitbucket connection made the way a user makes one: bitbucket.create with an API token and
// its Atlassian e-mail, against Bitbucket Cloud on loopback (the provider's apiUrl and webUrl point
// there); its token and app password sealed at rest and never answered; its repositories and
// branches listed (every page), testConnection running a deploy's path and naming the failing step
// (a refused app password said plainly); another organization's connection 404; and an
// application and a compose stack deployed from it on the real Docker engine, cloned with the
// token as a header scoped to the host, which appears in no log.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer, signUpAdmin, otherOrganization, makeGitRepo, commitFiles, Client, TEST_BASE_IMAGE } from '@berth/core/testing';
import { startFakeBitbucket } from '../../../providers/git-bitbucket/test/bitbucket-api.ts';
import { deployApplication, deployStack, ok } from './deploy-from.ts';

const run = promisify(execFile);

const bb = await startFakeBitbucket(t);
const repo = await makeGitRepo({
  'docker-compose.yml': `services:\n  worker:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sleep", "3600"]\n`,
  Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN mkdir -p /www\nCMD ["sh", "-c", "echo from-bitbucket > /www/index.html && exec httpd -f -p 8080 -h /www"]\n`,
});
t.teardown(repo.cleanup);
await run('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'release']);
const release = await commitFiles(repo.dir, { VERSION: '2\n' });
await run('git', ['-C', repo.dir, 'checkout', '-q', 'main']);
await bb.addGitRepo('team', 'app', repo.dir, { main: repo.commit, release });
for (const slug of ['docs', 'site']) bb.repos.push({ workspace: 'team', slug, isPrivate: false, branches: { main: repo.commit } });
await bb.addGitRepo('elsewhere', 'tools', repo.dir, { main: repo.commit, release });

const server = await startTestServer({ providers: { git: { bitbucket: { options: { apiUrl: bb.apiUrl, webUrl: bb.webUrl } } } } });
t.teardown(() => server.destroy());
const { client, userId, apiKey } = await signUpAdmin(server);
const sql = (q: string, p: unknown[]) => server.kernel.container.cradle.orm.em.getConnection().execute(q, p) as Promise<Record<string, any>[]>;

let bitbucketId = '';
let gitProviderId = '';

t.test('create with an API token; the owner is the caller; the e-mail must be one', async t => {
  const made = await ok(
    client.post('bitbucket.create', {
      authId: 'someone-else',
      name: 'Team Bitbucket',
      bitbucketUsername: bb.user.username,
      bitbucketEmail: bb.user.email,
      apiToken: bb.user.apiToken,
      bitbucketWorkspaceName: 'team',
    }),
    'bitbucket.create',
  );
  ({ bitbucketId, gitProviderId } = made);
  t.match(made, {
    bitbucketUsername: bb.user.username,
    bitbucketEmail: bb.user.email,
    bitbucketWorkspaceName: 'team',
    apiToken: null,
    appPassword: null,
    gitProvider: { providerType: 'bitbucket', userId, name: 'Team Bitbucket' },
  });
  const bad = await client.post('bitbucket.create', { authId: '', name: 'x', bitbucketEmail: 'not-an-email' });
  t.equal(bad.status, 400);
  t.same(bad.body.issues.map((i: any) => i.path.join('.')).sort(), ['authId', 'bitbucketEmail'], 'the fields are named');
  t.match((await client.get('bitbucket.bitbucketProviders', {})).body, [{ bitbucketId, gitProvider: { gitProviderId } }]);
});

t.test('API token and app password are sealed at rest and in no answer', async t => {
  const older = await ok(client.post('bitbucket.create', { authId: 'x', name: 'older', bitbucketUsername: bb.user.username, appPassword: bb.user.appPassword }), 'bitbucket.create (app password)');
  t.teardown(() => client.post('gitProvider.remove', { gitProviderId: older.gitProviderId }));
  const rows = await sql(`select secrets->>'apiToken' as api_token, secrets->>'appPassword' as app_password from git_connections where connection_id in (?, ?)`, [bitbucketId, older.bitbucketId]);
  t.same(
    rows
      .flatMap(r => Object.values(r))
      .filter(v => v !== null)
      .map(v => String(v).slice(0, 3)),
    ['v1:', 'v1:'],
    'both sealed',
  );
  const everything = JSON.stringify([
    (await client.get('gitProvider.getAll', {})).body,
    (await client.get('bitbucket.one', { bitbucketId })).body,
    (await client.get('bitbucket.one', { bitbucketId: older.bitbucketId })).body,
    (await client.get('bitbucket.bitbucketProviders', {})).body,
  ]);
  for (const secret of [bb.user.apiToken, bb.user.appPassword]) t.notOk(everything.includes(secret), 'no answer carries the token or the password');
  const listed = (await client.get('gitProvider.getAll', {})).body.find((p: any) => p.gitProviderId === gitProviderId);
  t.match(listed, { isOwner: true, github: null, gitlab: null, bitbucket: { bitbucketId, apiToken: null, appPassword: null } });
});

t.test('repositories, branches and testConnection go through the token; a failure names its step', async t => {
  const repos = await ok(client.get('bitbucket.getBitbucketRepositories', { bitbucketId }), 'getBitbucketRepositories');
  t.same(repos.map((r: any) => r.slug).sort(), ['app', 'docs', 'site'], "every page of the workspace's repositories");
  t.same(
    repos.find((r: any) => r.slug === 'app'),
    { name: 'app', url: `${bb.webUrl}/team/app`, slug: 'app', owner: { username: 'team' } },
  );
  const branches = await ok(client.get('bitbucket.getBitbucketBranches', { bitbucketId, owner: 'team', repo: 'app' }), 'getBitbucketBranches');
  t.same(
    branches.sort((a: any, b: any) => a.name.localeCompare(b.name)),
    [
      { name: 'main', commit: { sha: repo.commit } },
      { name: 'release', commit: { sha: release } },
    ],
  );
  t.same((await client.get('bitbucket.getBitbucketBranches', { owner: 'team', repo: 'app' })).body, [], 'no bitbucketId, no branches (as the peer)');
  const gitRequests = bb.git.requests.length;
  t.equal((await client.post('bitbucket.testConnection', { bitbucketId })).body, 'Found 3 repositories');
  t.ok(
    bb.git.requests.slice(gitRequests).some(r => r.authorization !== undefined),
    'git ls-remote ran with the credential',
  );
  t.equal((await client.post('bitbucket.testConnection', { bitbucketId, workspaceName: 'elsewhere' })).body, 'Found 1 repositories', "workspaceName replaces the record's for the test");

  const wrong = await client.post('bitbucket.testConnection', { bitbucketId, apiToken: 'ATATT-not-a-token-bitbucket-issued' });
  t.equal(wrong.status, 400);
  t.match(wrong.body.message, /^credentials: Bitbucket refused the credentials of /);
  t.equal((await client.post('bitbucket.testConnection', {})).status, 400, 'bitbucketId is required (min 1)');

  // An older record's app password: it works until Bitbucket refuses app passwords, then testConnection says so.
  const older = await ok(
    client.post('bitbucket.create', { authId: 'x', name: 'older', bitbucketUsername: bb.user.username, appPassword: bb.user.appPassword, bitbucketWorkspaceName: 'team' }),
    'bitbucket.create',
  );
  t.teardown(() => client.post('gitProvider.remove', { gitProviderId: older.gitProviderId }));
  t.equal((await client.post('bitbucket.testConnection', { bitbucketId: older.bitbucketId })).body, 'Found 3 repositories', 'an app password still accepted');
  bb.retireAppPasswords();
  const retired = await client.post('bitbucket.testConnection', { bitbucketId: older.bitbucketId });
  t.equal(retired.status, 400);
  t.match(retired.body.message, /^credentials: Bitbucket refused the app password of starbuck .*Atlassian is retiring app passwords; create an API token/);

  const updated = await ok(client.post('bitbucket.update', { bitbucketId, gitProviderId, name: 'Team BB', bitbucketWorkspaceName: 'team' }), 'bitbucket.update');
  t.match(updated, { bitbucketId, bitbucketWorkspaceName: 'team', apiToken: null, appPassword: null, gitProviderId });
  t.equal((await client.get('bitbucket.one', { bitbucketId })).body.gitProvider.name, 'Team BB');
  const bad = await client.post('bitbucket.update', { bitbucketId, gitProviderId: '', name: '', bitbucketEmail: 'x@' });
  t.equal(bad.status, 400);
  t.same(bad.body.issues.map((i: any) => i.path.join('.')).sort(), ['bitbucketEmail', 'gitProviderId', 'name']);
});

t.test("another organization's connection is 404 everywhere", async t => {
  const other = await otherOrganization(server, userId);
  const {
    body: { environment },
  } = await other.client.post('project.create', { name: 'Elsewhere' });
  const theirs = await ok(other.client.post('application.create', { name: 'theirs', environmentId: environment.environmentId }), 'application.create');
  t.equal(
    (
      await other.client.post('application.saveBitbucketProvider', {
        applicationId: theirs.applicationId,
        bitbucketBranch: 'main',
        bitbucketBuildPath: '/',
        bitbucketOwner: 'team',
        bitbucketRepository: 'app',
        bitbucketRepositorySlug: 'app',
        bitbucketId,
      })
    ).status,
    404,
    'saveBitbucketProvider',
  );
  const stack = await ok(other.client.post('compose.create', { name: 'theirs', environmentId: environment.environmentId, composeFile: 'services: {}\n' }), 'compose.create');
  t.equal((await other.client.post('compose.update', { composeId: stack.composeId, sourceType: 'bitbucket', bitbucketId })).status, 404, 'compose.update');
  for (const [op, input] of [
    ['bitbucket.one', { bitbucketId }],
    ['bitbucket.getBitbucketRepositories', { bitbucketId }],
    ['bitbucket.getBitbucketBranches', { bitbucketId, owner: 'team', repo: 'app' }],
  ] as const) {
    t.equal((await other.client.get(op, input)).status, 404, op);
  }
  for (const [op, input] of [
    ['bitbucket.testConnection', { bitbucketId }],
    ['bitbucket.update', { bitbucketId, gitProviderId, name: 'x' }],
  ] as const) {
    t.equal((await other.client.post(op, input)).status, 404, op);
  }
  t.same((await other.client.get('bitbucket.bitbucketProviders', {})).body, []);
  t.equal((await client.get('bitbucket.one', { bitbucketId })).body.gitProvider.name, 'Team BB', 'unchanged');
});

t.test('an application and a compose stack deploy from the repository through the connection; the token is in no log', async t => {
  const { app, one, environmentId, deploy } = await deployApplication(t, client, {
    name: 'Bitbucket',
    serves: 'from-bitbucket',
    save: applicationId =>
      client.post('application.saveBitbucketProvider', {
        applicationId,
        bitbucketBranch: 'main',
        bitbucketBuildPath: '/',
        bitbucketOwner: 'team',
        bitbucketRepository: 'App',
        bitbucketRepositorySlug: 'app',
        bitbucketId,
      }),
  });
  t.equal(one.sourceType, 'bitbucket');
  t.same(one.bitbucket, { bitbucketId, bitbucketUsername: bb.user.username, bitbucketEmail: bb.user.email, bitbucketWorkspaceName: 'team', gitProviderId }, 'joined without token or password');

  const gitRequests = bb.git.requests.length;
  const { log } = await deploy();
  t.ok(
    bb.git.requests.slice(gitRequests).some(r => r.path.includes('team/app.git') && r.authorization !== undefined),
    'the clone (of the slug, not the display name) sent the credential',
  );
  t.match(log, new RegExp(repo.commit), 'the log names the commit');
  t.notOk(log.includes(bb.user.apiToken), 'no token in the log');
  t.notOk(log.includes(Buffer.from(`x-bitbucket-api-token-auth:${bb.user.apiToken}`).toString('base64')), 'nor the header that carries it');

  const stack = await deployStack(t, client, {
    environmentId,
    name: 'bb',
    fields: { sourceType: 'bitbucket', bitbucketId, bitbucketOwner: 'team', bitbucketRepository: 'app', bitbucketBranch: 'release' },
  });
  t.match(stack.log, new RegExp(release), 'the stack was fetched from the release branch');
  t.notOk(stack.log.includes(bb.user.apiToken), "no token in the stack's log");
  t.match(stack.one.bitbucket, { bitbucketId, gitProviderId });

  const refused = await client.post('gitProvider.remove', { gitProviderId });
  t.equal(refused.status, 409);
  t.match(refused.body.message, new RegExp(`application ${app.appName}`));
});

t.test("an upgrade moves the peer's bitbucket table into the generic record: same ids, secrets still open, workloads still joined", async t => {
  const before = (await client.get('bitbucket.one', { bitbucketId })).body;
  // The schema and the record as Berth kept them before its provider declared the form.
  const [stored] = await sql('select settings, secrets from git_connections where connection_id = ?', [bitbucketId]);
  await sql(
    'create table "bitbucket_providers" ("bitbucket_id" varchar(32) not null, "git_provider_id" varchar(32) not null references "git_providers" ("git_provider_id") on delete cascade, "bitbucket_username" varchar(255) null, "bitbucket_email" varchar(255) null, "app_password" text null, "api_token" text null, "bitbucket_workspace_name" varchar(255) null, primary key ("bitbucket_id"))',
    [],
  );
  await sql('insert into bitbucket_providers values (?, ?, ?, ?, ?, ?, ?)', [
    bitbucketId,
    gitProviderId,
    stored!.settings.bitbucketUsername ?? null,
    stored!.settings.bitbucketEmail ?? null,
    stored!.secrets.appPassword ?? null,
    stored!.secrets.apiToken ?? null,
    stored!.settings.bitbucketWorkspaceName ?? null,
  ]);
  await sql('delete from git_connections where connection_id = ?', [bitbucketId]);
  await sql('delete from berth_migrations where name = ?', ['Migration20261207030000_bitbucket_into_connections']);
  t.equal((await client.get('bitbucket.one', { bitbucketId })).status, 404, 'the old record is not read in place');

  const upgraded = await server.restart();
  const after = new Client(upgraded.url, { apiKey });
  t.same((await after.get('bitbucket.one', { bitbucketId })).body, before, 'the connection answers as before, under its id');
  const [moved] = (await upgraded.kernel.container.cradle.orm.em.getConnection().execute('select secrets from git_connections where connection_id = ?', [bitbucketId])) as Record<string, any>[];
  t.same(moved!.secrets, { apiToken: null, appPassword: null, ...stored!.secrets }, 'the sealed values moved as they were');
  t.match((await after.post('bitbucket.testConnection', { bitbucketId })).body, /^Found \d+ repositories/, 'and open: the API token still reaches Bitbucket');
  const apps = (await after.get('gitProvider.getAll', {})).body as { gitProviderId: string; bitbucket: unknown }[];
  t.match(apps.find(a => a.gitProviderId === gitProviderId)?.bitbucket, { bitbucketId, apiToken: null }, 'gitProvider.getAll answers its record');
  const [table] = (await upgraded.kernel.container.cradle.orm.em.getConnection().execute(`select to_regclass('bitbucket_providers') as t`, [])) as { t: string | null }[];
  t.equal(table!.t, null, 'the old table is gone');
});
