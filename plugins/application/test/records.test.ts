// application.* records through the real kernel and PostgreSQL: both variants, validation,
// appName rules, secrets sealed at rest, save* operations, search, move, org isolation.
import t from 'tap';
import pg from 'pg';
import { startTestServer, signUpAdmin, otherOrganization } from '@berth/core/testing';

const issuePaths = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

t.test('application records', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  const { client, token, userId, organizationId } = await signUpAdmin(server);
  const {
    body: { project, environment },
  } = await client.post('project.create', { name: 'Shop' });

  let app: Record<string, any> = {};
  t.test('create (current variant: environmentId) generates a clean appName and defaults', async t => {
    const res = await client.post('application.create', { name: 'My Web Shop!', environmentId: environment.environmentId, description: 'front' });
    t.equal(res.status, 200);
    app = res.body;
    t.match(app.appName, /^my-web-shop-[0-9a-f]{6}$/);
    t.match(app, {
      name: 'My Web Shop!',
      description: 'front',
      environmentId: environment.environmentId,
      organizationId,
      serverId: null,
      sourceType: 'github',
      buildType: 'nixpacks',
      applicationStatus: 'idle',
      replicas: 1,
      dockerfile: 'Dockerfile',
      env: null,
      createEnvFile: true,
    });
    t.type(app.refreshToken, 'string');
  });

  t.test('create (older variant: projectId, bearer token) lands in the default environment', async t => {
    const res = await client.post('application.create', { name: 'api', projectId: project.projectId, appName: 'shop-api' }, { apiKey: undefined, token });
    t.equal(res.status, 200);
    t.match(res.body, { appName: 'shop-api', environmentId: environment.environmentId });
    const again = await client.post('application.create', { name: 'api2', environmentId: environment.environmentId, appName: 'shop-api' });
    t.equal(again.status, 409, 'appName is unique per host');
    t.match(again.body.message, /shop-api/);
  });

  t.test('bad input names the field', async t => {
    const cases: [Record<string, unknown>, string][] = [
      [{ environmentId: environment.environmentId }, 'name'],
      [{ name: 'x', environmentId: environment.environmentId, appName: '-rm' }, 'appName'],
      [{ name: 'x', environmentId: environment.environmentId, appName: 'a.b' }, 'appName'],
      [{ name: 'x', environmentId: environment.environmentId, appName: 'a;touch /tmp/x' }, 'appName'],
      [{ name: 'x', environmentId: environment.environmentId, appName: 'x'.repeat(64) }, 'appName'],
    ];
    const accepted: string[] = [];
    const unnamed: string[] = [];
    for (const [input, field] of cases) {
      const res = await client.post('application.create', input);
      if (res.status !== 400) accepted.push(`${JSON.stringify(input)}: ${res.status}`);
      if (!issuePaths(res.body).includes(field)) unnamed.push(`${JSON.stringify(input)}: ${field} not in ${JSON.stringify(res.body.issues)}`);
    }
    t.same(accepted, [], 'a missing name and each bad appName are a 400');
    t.same(unnamed, [], 'each names its field');
    const neither = await client.post('application.create', { name: 'x' });
    t.equal(neither.status, 400);
    t.match(JSON.stringify(neither.body), /environmentId/);
    const unknownEnv = await client.post('application.create', { name: 'x', environmentId: 'nope' });
    t.equal(unknownEnv.status, 404);
  });

  t.test('one answers the record with environment, project and empty attachments', async t => {
    const res = await client.get('application.one', { applicationId: app.applicationId });
    t.equal(res.status, 200);
    t.match(res.body, {
      applicationId: app.applicationId,
      environment: { environmentId: environment.environmentId, name: 'production', project: { projectId: project.projectId, name: 'Shop' } },
      deployments: [],
      mounts: [],
      ports: [],
      domains: [],
      redirects: [],
      security: [],
      registry: null,
      server: null,
    });
    const trpc = await client.trpc('query', 'application.one', { applicationId: app.applicationId });
    t.equal(trpc.body.result.data.json.applicationId, app.applicationId, 'the tRPC form answers too');
  });

  t.test('saveEnvironment seals values at rest and answers them in one', async t => {
    const env = 'DATABASE_URL=postgres://u:s3cr3t-value@db/x\nPLAIN=1';
    const res = await client.post('application.saveEnvironment', { applicationId: app.applicationId, env, buildArgs: 'TOKEN=build-secret-42', createEnvFile: false });
    t.equal(res.status, 200);
    t.equal(res.body, true, 'answers true, as the peer does');
    t.match((await client.get('application.one', { applicationId: app.applicationId })).body, { env, buildArgs: 'TOKEN=build-secret-42', createEnvFile: false });
    const db = new pg.Client(server.database);
    await db.connect();
    const { rows } = await db.query('select sealed::text as sealed, settings::text as settings from applications where application_id = $1', [app.applicationId]);
    await db.end();
    t.notMatch(rows[0].sealed + rows[0].settings, /s3cr3t-value|build-secret-42/, 'no secret is stored in clear');
    t.equal((await client.get('application.one', { applicationId: app.applicationId })).body.env, env);
  });

  t.test('save* operations set the source and build fields', async t => {
    /** Each save* answers true (as the peer does); the record shows what it set. */
    const saved = async (op: string, body: Record<string, unknown>) => {
      const res = await client.post(op, { applicationId: app.applicationId, ...body });
      t.same([res.status, res.body], [200, true], `${op} answers true`);
      return { body: (await client.get('application.one', { applicationId: app.applicationId })).body };
    };
    const docker = await saved('application.saveDockerProvider', { dockerImage: 'nginx:alpine', username: 'u', password: 'registry-pass', registryUrl: 'registry.example.com' });
    t.match(docker.body, { sourceType: 'docker', dockerImage: 'nginx:alpine', username: 'u', registryUrl: 'registry.example.com' });
    const git = await saved('application.saveGitProdiver', { customGitUrl: 'https://example.com/r.git', customGitBranch: 'main', customGitBuildPath: '/' });
    t.match(git.body, { sourceType: 'git', customGitUrl: 'https://example.com/r.git', customGitBranch: 'main' });
    const git2 = await saved('application.saveGitProvider', { customGitUrl: 'https://example.com/s.git', customGitBranch: 'dev' });
    t.match(git2.body, { sourceType: 'git', customGitUrl: 'https://example.com/s.git', customGitBranch: 'dev' });
    const gh = await saved('application.saveGithubProvider', { repository: 'r', owner: 'o', branch: 'main', buildPath: '/', githubId: null, triggerType: 'push' });
    t.match(gh.body, { sourceType: 'github', repository: 'r', owner: 'o', branch: 'main' });
    const gl = await saved('application.saveGitlabProvider', { gitlabRepository: 'r', gitlabOwner: 'o', gitlabBranch: 'main', gitlabProjectId: 7 });
    t.match(gl.body, { sourceType: 'gitlab', gitlabProjectId: 7 });
    const bb = await saved('application.saveBitbucketProvider', { bitbucketRepository: 'r', bitbucketOwner: 'o', bitbucketBranch: 'main' });
    t.match(bb.body, { sourceType: 'bitbucket', bitbucketRepository: 'r' });
    const gt = await saved('application.saveGiteaProvider', { giteaRepository: 'r', giteaOwner: 'o', giteaBranch: 'main' });
    t.match(gt.body, { sourceType: 'gitea', giteaRepository: 'r' });
    const off = await saved('application.disconnectGitProvider', {});
    t.match(off.body, { repository: null, gitlabRepository: null, customGitUrl: null, giteaRepository: null });
    const bt = await saved('application.saveBuildType', { buildType: 'dockerfile', dockerfile: 'web/Dockerfile', dockerContextPath: 'web', dockerBuildStage: 'prod' });
    t.match(bt.body, { buildType: 'dockerfile', dockerfile: 'web/Dockerfile', dockerContextPath: 'web', dockerBuildStage: 'prod' });
    const badBuild = await client.post('application.saveBuildType', { applicationId: app.applicationId, buildType: 'make' });
    t.equal(badBuild.status, 400);
    t.ok(issuePaths(badBuild.body).includes('buildType'));
    const badBranch = await client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitBranch: 'main;rm -rf /' });
    t.equal(badBranch.status, 400);
    t.ok(issuePaths(badBranch.body).includes('customGitBranch'));
  });

  t.test('update, markRunning, refreshToken', async t => {
    const up = await client.post('application.update', { applicationId: app.applicationId, name: 'Shop web', replicas: 2, memoryLimit: '512m', cpuLimit: '0.5', labelsSwarm: { team: 'web' } });
    t.same([up.status, up.body], [200, true], 'update answers true, as the peer does');
    t.match((await client.get('application.one', { applicationId: app.applicationId })).body, { name: 'Shop web', replicas: 2, memoryLimit: '512m', cpuLimit: '0.5', labelsSwarm: { team: 'web' } });
    const badReplicas = await client.post('application.update', { applicationId: app.applicationId, replicas: -1 });
    t.equal(badReplicas.status, 400);
    t.ok(issuePaths(badReplicas.body).includes('replicas'));
    t.equal((await client.post('application.markRunning', { applicationId: app.applicationId })).body, true);
    t.equal((await client.get('application.one', { applicationId: app.applicationId })).body.applicationStatus, 'running');
    const before = (await client.get('application.one', { applicationId: app.applicationId })).body.refreshToken;
    t.equal((await client.post('application.refreshToken', { applicationId: app.applicationId })).body, true);
    const after = (await client.get('application.one', { applicationId: app.applicationId })).body.refreshToken;
    t.type(after, 'string');
    t.not(after, before);
  });

  t.test('search and move', async t => {
    const found = await client.get('application.search', { q: 'shop web' });
    t.equal(found.status, 200);
    t.equal(found.body.total, 1);
    t.equal(found.body.items[0].applicationId, app.applicationId);
    t.equal(found.body.items[0].env, null, 'lists carry no secrets');
    t.equal((await client.get('application.search', { projectId: project.projectId })).body.total, 2);
    const staging = await client.post('environment.create', { name: 'staging', projectId: project.projectId });
    t.equal(staging.status, 200);
    const moved = await client.post('application.move', { applicationId: app.applicationId, targetEnvironmentId: staging.body.environmentId });
    t.equal(moved.body.environmentId, staging.body.environmentId);
    const listed = await client.get('environment.one', { environmentId: staging.body.environmentId });
    t.same(
      listed.body.applications.map((a: { applicationId: string }) => a.applicationId),
      [app.applicationId],
      'the environment lists it',
    );
    t.notOk('env' in listed.body.applications[0], 'environment lists carry no secrets');
  });

  t.test('another organization sees nothing', async t => {
    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('application.one', { applicationId: app.applicationId })).status, 404, 'application.one');
    const answered: string[] = [];
    for (const op of ['application.update', 'application.saveEnvironment', 'application.deploy', 'application.stop', 'application.delete', 'application.cancelDeployment']) {
      const res = await other.client.post(op, { applicationId: app.applicationId });
      if (res.status !== 404) answered.push(`${op}: ${res.status}`);
    }
    t.same(answered, [], 'update, saveEnvironment, deploy, stop, delete and cancelDeployment are 404 for it');
    t.equal((await other.client.post('application.create', { name: 'x', environmentId: environment.environmentId })).status, 404, 'cannot create in a foreign environment');
    t.equal((await other.client.get('application.search', {})).body.total, 0);
  });

  t.test('delete answers the record and removes it', async t => {
    const del = await client.post('application.delete', { applicationId: app.applicationId });
    t.equal(del.status, 200);
    t.equal(del.body.applicationId, app.applicationId);
    t.equal((await client.get('application.one', { applicationId: app.applicationId })).status, 404);
  });
});
