// Issue 46: a pull request event cannot make Berth run another tenant's code with an application's
// preview env and build secrets. The refresh token names the hook (application.one answers it to
// every member, and a link or a log may carry it further): whoever holds it can post anything. An
// application deploying team/app through a GitHub App connection (GitHub on loopback, its git served
// by a real git http-backend whose requests are counted) gets a forged pull_request naming a fork of
// the sender's, mallory/app:
// - unsigned (the application has no webhook secret, as the peer allows): answered 200 with why,
//   logged, no clone of anything and no deployment; the same pull request signed with the secret the
//   application then has is deployed (the positive control);
// - signed, but lying (it says the head is team/app and its author an OWNER): GitHub's API says the
//   head is mallory/app and mallory has no write access to team/app, so nothing is cloned, and the
//   delivery log says why; once mallory may push to team/app, the same pull request deploys the fork.
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { startTestServer, signUpAdmin, makeGitRepo, commitFiles, deploymentFinished, TEST_BASE_IMAGE } from '@berth/core/testing';
import { startFakeGithub } from '../providers/git-github/test/github-api.ts';
import { githubPullRequest } from '../plugins/deploy-hook/test/github-examples.ts';

const run = promisify(execFile);
const DOCKERFILE = `FROM ${TEST_BASE_IMAGE}\nCOPY page.txt /page.txt\nCMD ["sh", "-c", "trap \\"exit 0\\" TERM; sleep 3600 & wait"]\n`;
const appKey = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
const github = await startFakeGithub(t, { publicKeyPem: appKey.publicKey, privateKeyPem: appKey.privateKey, appId: '4242', installationId: 77 });

const repo = await makeGitRepo({ Dockerfile: DOCKERFILE, 'page.txt': 'team\n' });
t.teardown(repo.cleanup);
await run('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'feature']);
const feature = await commitFiles(repo.dir, { 'page.txt': 'team: feature\n' }, 'feature');
await github.addGitRepository('team', 'app', repo.dir, { main: repo.commit, feature });
const evil = await makeGitRepo({ Dockerfile: DOCKERFILE, 'page.txt': 'mallory\n' });
t.teardown(evil.cleanup);
await run('git', ['-C', evil.dir, 'checkout', '-q', '-b', 'feature']);
const evilSha = await commitFiles(evil.dir, { 'page.txt': 'mallory: feature\n' }, 'mallory');
await github.addGitRepository('mallory', 'app', evil.dir, { main: evil.commit, feature: evilSha });
// alice may push to team/app; mallory is no collaborator (GitHub answers 404 for her permission).
github.permissions.set('team/app', new Map([['alice', 'write']]));

const server = await startTestServer({ proxy: 'none', deploySettleSeconds: 1, deployConcurrency: 1 });
t.teardown(() => server.destroy());
const { client, userId, organizationId } = await signUpAdmin(server);
const cradle = server.kernel.container.cradle;
const { githubId } = await cradle.gitProviders.createConnection(
  'github',
  {
    name: 'GitHub',
    githubAppName: null,
    githubAppId: 4242,
    githubClientId: null,
    githubClientSecret: null,
    githubWebhookSecret: null,
    githubPrivateKey: appKey.privateKey,
    githubInstallationId: '77',
    githubUrl: github.url,
  },
  organizationId,
  userId,
  cradle.orm.em.fork(),
);
const ok = async (r: Promise<{ status: number; body: any }>, what: string) => {
  const reply = await r;
  if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
};
const { environmentId } = (await ok(client.post('project.create', { name: 'Tenancy hooks' }), 'project.create')).environment;
const { applicationId, refreshToken } = await ok(client.post('application.create', { name: 'web', environmentId, appName: `th-${Date.now().toString(36)}` }), 'application.create');
t.teardown(() => client.post('application.delete', { applicationId }));
await ok(client.post('application.saveGithubProvider', { applicationId, githubId, owner: 'team', repository: 'app', branch: 'main', buildPath: '/' }), 'saveGithubProvider');
await ok(
  client.post('application.update', {
    applicationId,
    buildType: 'dockerfile',
    dockerfile: 'Dockerfile',
    isPreviewDeploymentsActive: true,
    previewWildcard: '*.tenancy.test',
    previewPort: 8080,
    previewBuildSecrets: 'DEPLOY_TOKEN=the-application-build-secret',
  }),
  'application.update',
);

/** The forged event: it claims team/app's branch by an OWNER, whatever GitHub holds. */
const forged = (number: number, sha: string) => {
  const s = githubPullRequest({ action: 'opened', number, branch: 'feature', sha, repository: 'team/app' });
  return JSON.stringify({ ...s, pull_request: { ...s.pull_request, id: 7000 + number, author_association: 'OWNER', user: { ...s.pull_request.user, login: 'alice' } } });
};
const send = async (text: string, secret?: string) => {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': randomBytes(8).toString('hex') };
  if (secret) headers['x-hub-signature-256'] = `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`;
  const res = await fetch(`${server.url}/api/deploy/${refreshToken}`, { method: 'POST', headers, body: text });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
/** git's requests for a repository, on the server's side. */
const fetchesOf = (name: string) => github.git.requests.filter(r => r.path.startsWith(`/${name}.git/`)).length;
const deployments = async () => Number((await cradle.orm.em.fork().getConnection().execute('select count(*) as n from deployments where organization_id = ?', [organizationId]))[0]?.n);
const previews = async () => (await ok(client.get('previewDeployment.all', { applicationId }), 'previewDeployment.all')) as Record<string, any>[];
const lastDecision = async () => ((await ok(client.get('application.webhookDeliveries', { applicationId }), 'webhookDeliveries')) as Record<string, any>[])[0];

t.test('an unsigned pull request event makes no preview: nothing cloned, nothing queued; signed, it does', async t => {
  github.pullRequests.set('team/app#5', { head: 'mallory/app', branch: 'feature', sha: evilSha, base: 'main', author: { id: 66, login: 'mallory' }, state: 'open' });
  const before = { requests: github.git.requests.length, deployments: await deployments() };
  const answer = await send(forged(5, evilSha));
  t.equal(answer.status, 200, 'answered 200, as the peer answers what it does not deploy');
  t.match(answer.body.reason, /^unsigned pull request event: previews are made only from signed deliveries/);
  t.notOk(answer.body.deploymentId, 'no deployment named');
  t.equal(github.git.requests.length, before.requests, "the git server saw no request at all (mallory/app's or team/app's)");
  t.equal(await deployments(), before.deployments, 'no deployment was queued');
  t.same(await previews(), [], 'no preview');
  t.match(await lastDecision(), { event: 'pull_request', signatureOk: null, statusCode: 200, decision: /^unsigned pull request event/ }, 'the delivery log says why');

  // The positive control: the application gets a secret, and a pull request of team/app's own branch, signed with it, is deployed.
  const secret = randomBytes(20).toString('hex');
  await ok(client.post('application.update', { applicationId, webhookSecret: secret }), 'application.update');
  github.pullRequests.set('team/app#6', { head: 'team/app', branch: 'feature', sha: feature, base: 'main', author: { id: 11, login: 'alice' }, state: 'open' });
  const cloned = fetchesOf('team/app');
  const signed = await send(forged(6, feature), secret);
  t.equal(signed.status, 202, JSON.stringify(signed.body));
  const done = await deploymentFinished(client, signed.body.deploymentId);
  t.equal(done.state, 'done', done.errorMessage ?? 'deployed');
  t.ok(fetchesOf('team/app') > cloned, 'team/app was cloned for it');
  t.equal(fetchesOf('mallory/app'), 0, 'mallory/app never was');
});

t.test("a signed event is believed for nothing that decides what runs: GitHub's API says whose fork it is and who may push", async t => {
  const secret = randomBytes(20).toString('hex');
  await ok(client.post('application.update', { applicationId, webhookSecret: secret }), 'application.update');
  github.pullRequests.set('team/app#7', { head: 'mallory/app', branch: 'feature', sha: evilSha, base: 'main', author: { id: 66, login: 'mallory' }, state: 'open' });
  const before = await deployments();
  const refused = await send(forged(7, evilSha), secret);
  const reason = 'pull request from a fork by mallory, who has no write access to team/app: not deployed while previewRequireCollaboratorPermissions is on';
  t.match(refused, { status: 200, body: { reason } }, 'the head and author GitHub holds, not the ones the event claims');
  t.equal(fetchesOf('mallory/app'), 0, 'nothing of mallory/app was fetched');
  t.equal(await deployments(), before, 'no deployment was queued');
  t.notOk(
    (await previews()).some(p => p.pullRequestNumber === '7'),
    'no preview',
  );
  t.match(await lastDecision(), { signatureOk: true, statusCode: 200, decision: reason }, 'the delivery log says why');

  // The positive control: once mallory may push to team/app, the same pull request deploys her fork's branch.
  github.permissions.get('team/app')!.set('mallory', 'write');
  t.teardown(() => void github.permissions.get('team/app')!.delete('mallory'));
  const deployed = await send(forged(7, evilSha), secret);
  t.equal(deployed.status, 202, JSON.stringify(deployed.body));
  const done = await deploymentFinished(client, deployed.body.deploymentId);
  t.equal(done.state, 'done', done.errorMessage ?? 'deployed');
  const log = String((await client.get('deployment.readLogs', { deploymentId: deployed.body.deploymentId })).body);
  t.match(log, 'of the fork mallory/app', 'from the fork GitHub names');
  t.match(log, new RegExp(`Fetched ${evilSha.slice(0, 7)}`), "the fork's head commit");
  t.ok(fetchesOf('mallory/app') > 0, 'mallory/app was cloned');
});
