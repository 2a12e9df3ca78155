// Push to deploy through a linked repository, against a running Berth and the git providers on
// loopback: a GitHub App's push (@octokit/webhooks-examples' push, filled in with a real commit,
// signed with the App's webhook secret as GitHub signs) reaches every workload deploying that repository
// through the connection, deploying the commit for one and saying why not for the other; and the
// webhooks Berth registers itself on GitLab, Gitea and Bitbucket when a repository is linked, removed
// when it is unlinked or the workload deleted; and a tag push deploying the tag's own commit.
import { execFile } from 'node:child_process';
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import { startTestServer, signUpAdmin, deploymentFinished, makeGitRepo, commitFiles, TEST_BASE_IMAGE } from '@berth/core/testing';
import { startFakeGithub } from '../../../providers/git-github/test/github-api.ts';
import { startFakeGitlab } from '../../../providers/git-gitlab/test/gitlab-api.ts';
import { startFakeBitbucket } from '../../../providers/git-bitbucket/test/bitbucket-api.ts';
import { startFakeGitea } from '../../../providers/git-gitea/test/gitea-api.ts';
import { githubPush } from './github-examples.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`./payloads/${name}.json`, import.meta.url), 'utf8'));
const stack = (text: string) => `services:\n  app:\n    image: ${TEST_BASE_IMAGE}\n    init: true\n    stop_grace_period: 1s\n    command: ["sleep", "3600"]\n# ${text}\n`;
const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
const publicUrl = 'https://berth.example.com';

const github = await startFakeGithub(t, { publicKeyPem: keys.publicKey, privateKeyPem: keys.privateKey, appId: '4242', installationId: 77 });
const gitlab = await startFakeGitlab(t);
const bitbucket = await startFakeBitbucket(t);
const gitea = await startFakeGitea(t);
const repo = await makeGitRepo({ 'docker-compose.yml': stack('v1') });
t.teardown(repo.cleanup);
const pushed = await commitFiles(repo.dir, { 'docker-compose.yml': stack('v2') }, 'second version');
await github.addGitRepository('team', 'app', repo.dir, { main: pushed });
await gitlab.addGitProject('team', 'app', repo.dir, { main: pushed });
await bitbucket.addGitRepo('team', 'app', repo.dir, { main: pushed });
await gitea.addGitRepo('team', 'app', repo.dir, { main: pushed });

const server = await startTestServer({
  publicUrl,
  deploySettleSeconds: 1,
  hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true },
  providers: { git: { bitbucket: { options: { apiUrl: bitbucket.apiUrl, webUrl: bitbucket.webUrl } } } },
});
t.teardown(() => server.destroy());
const { client, userId, organizationId } = await signUpAdmin(server);
const { environmentId } = (await client.post('project.create', { name: 'Linked' })).body.environment;
const ok = async (r: Promise<{ status: number; body: any }>, what: string) => {
  const reply = await r;
  if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
};
const stamp = Date.now().toString(36);

t.test('a GitHub App push deploys the pushed commit of each workload deploying the repository', async t => {
  const appSecret = randomBytes(20).toString('hex');
  const cradle = server.kernel.container.cradle;
  const connection = await cradle.gitProviders.createConnection(
    'github',
    {
      name: 'Team App',
      githubAppName: 'team-app',
      githubAppId: 4242,
      githubClientId: null,
      githubClientSecret: null,
      githubWebhookSecret: appSecret,
      githubPrivateKey: keys.privateKey,
      githubInstallationId: '77',
      githubUrl: github.url,
    },
    organizationId,
    userId,
    cradle.orm.em.fork(),
  );
  const githubId = connection.githubId;
  const made = await ok(client.post('compose.create', { name: 'from app', environmentId, appName: `linked-${stamp}` }), 'compose.create');
  const composeId = made.composeId;
  t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
  await ok(client.post('compose.update', { composeId, sourceType: 'github', githubId, owner: 'team', repository: 'app', branch: 'main', composePath: './docker-compose.yml' }), 'compose.update');
  const app = await ok(client.post('application.create', { name: 'release app', environmentId }), 'application.create');
  t.teardown(() => client.post('application.delete', { applicationId: app.applicationId }));
  await ok(client.post('application.saveGithubProvider', { applicationId: app.applicationId, githubId, owner: 'team', repository: 'app', branch: 'release', buildPath: '/' }), 'saveGithubProvider');

  const body = JSON.stringify(githubPush({ ref: 'refs/heads/main', sha: pushed, message: 'second version', files: ['docker-compose.yml'], repository: 'team/app', installationId: 77 }));
  const send = async (headers: Record<string, string>) => {
    const res = await fetch(`${server.url}/api/deploy/github`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': 'push', ...headers }, body });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

  const unsigned = await send({ 'x-github-delivery': 'app-1' });
  t.equal(unsigned.status, 401);
  t.match(unsigned.body.reason, /missing signature/);
  const wrong = await send({ 'x-github-delivery': 'app-1', 'x-hub-signature-256': sign('not-the-app-secret') });
  t.equal(wrong.status, 401);
  t.match(wrong.body.reason, /bad signature/);

  // A delivery naming an installation no connection has: refused before any connection's secret is
  // opened (SecretBox.decrypt is counted while it runs), and written to no workload's log.
  const secrets = cradle.secrets;
  const decrypt = secrets.decrypt.bind(secrets);
  let opened = 0;
  secrets.decrypt = (sealed: string) => (opened++, decrypt(sealed));
  t.teardown(() => void (secrets.decrypt = decrypt));
  const stranger = JSON.stringify(githubPush({ ref: 'refs/heads/main', sha: pushed, repository: 'team/app', installationId: 999 }));
  const unknown = await fetch(`${server.url}/api/deploy/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': 'app-x',
      'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(stranger).digest('hex')}`,
    },
    body: stranger,
  });
  t.equal(unknown.status, 401, 'an unknown installation is refused');
  t.match(await unknown.json(), { reason: 'unknown installation: no GitHub App connection has installation 999' });
  t.equal(opened, 0, 'no secret was opened for it');
  const known = await send({ 'x-github-delivery': 'app-1', 'x-hub-signature-256': sign('not-the-app-secret') });
  t.equal(known.status, 401, 'its own installation, wrongly signed: refused');
  t.equal(opened, 1, "after the installation's connection was found, its one secret was opened (the check reaches it)");
  secrets.decrypt = decrypt;
  t.same((await client.get('compose.webhookDeliveries', { composeId })).body, [], 'no refused delivery is in the log of a workload deploying the repository');

  const queued = await send({ 'x-github-delivery': 'app-2', 'x-hub-signature-256': sign(appSecret) });
  t.equal(queued.status, 202, JSON.stringify(queued.body));
  t.match(queued.body, { message: '1 of 2 deployments queued', deploymentId: String });
  const byKind = Object.fromEntries((queued.body.workloads as any[]).map(w => [w.kind, w]));
  t.match(byKind.compose, { id: composeId, statusCode: 202, deploymentId: queued.body.deploymentId });
  t.match(byKind.application, { id: app.applicationId, statusCode: 200, reason: /branch not watched: main was pushed, the workload deploys release/ });

  const again = await send({ 'x-github-delivery': 'app-2', 'x-hub-signature-256': sign(appSecret) });
  t.equal(again.status, 200, 'a redelivery queues nothing');
  t.match(again.body.workloads, [{ reason: 'already processed' }, { reason: 'already processed' }]);

  const done = await deploymentFinished(client, queued.body.deploymentId);
  t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
  t.match(done, { title: 'second version', description: `Hash: ${pushed}` });
  t.match(String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body), new RegExp(`Fetched ${pushed.slice(0, 7)}`), 'the pushed commit was deployed');
  t.equal((await client.get('deployment.allByCompose', { composeId })).body.length, 1, 'one deployment');

  const log = (await client.get('compose.webhookDeliveries', { composeId })).body;
  t.match(log, [
    { provider: 'github', deliveryId: 'app-2', statusCode: 200, decision: 'already processed' },
    { provider: 'github', deliveryId: 'app-2', signatureOk: true, statusCode: 202, commit: pushed },
  ]);
  t.equal(log.length, 2, 'the refused deliveries are not in it');
  t.match((await client.get('application.webhookDeliveries', { applicationId: app.applicationId })).body[1], { deliveryId: 'app-2', decision: /branch not watched/ });

  const other = JSON.stringify(githubPush({ ref: 'refs/heads/main', sha: pushed, repository: 'team/elsewhere', installationId: 77 }));
  const res = await fetch(`${server.url}/api/deploy/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(other).digest('hex')}` },
    body: other,
  });
  t.equal(res.status, 200);
  t.match(await res.json(), { reason: /no application or compose stack deploys team\/elsewhere/ });
});

t.test('linking a GitLab, Gitea or Bitbucket repository registers its webhook; unlinking or deleting removes it', async t => {
  const tokens = gitlab.issue(3600);
  const gl = await ok(client.post('gitlab.create', { authId: 'x', name: 'GitLab', gitlabUrl: gitlab.url, ...tokens }), 'gitlab.create');
  const bb = await ok(client.post('bitbucket.create', bitbucket.connection('Bitbucket')), 'bitbucket.create');

  // An application linked to GitLab: a webhook at its hook URL, with a secret made for it.
  const app = await ok(client.post('application.create', { name: 'gl app', environmentId }), 'application.create');
  await ok(
    client.post('application.saveGitlabProvider', {
      applicationId: app.applicationId,
      gitlabId: gl.gitlabId,
      gitlabOwner: 'team',
      gitlabRepository: 'app',
      gitlabPathNamespace: 'team/app',
      gitlabBranch: 'main',
      gitlabBuildPath: '/',
    }),
    'saveGitlabProvider',
  );
  let hooks = gitlab.webhooks.get('team/app') ?? [];
  t.equal(hooks.length, 1, 'one webhook on the GitLab project');
  t.match(hooks[0], { url: `${publicUrl}/api/deploy/${app.refreshToken}`, pushEvents: true, mergeRequestsEvents: true }, 'for pushes and merge requests (previews)');
  t.match((await client.get('application.one', { applicationId: app.applicationId })).body, { hasWebhookSecret: true, webhookSecret: null }, 'a secret was made for it');
  // Its secret is the workload's: a delivery carrying it as X-Gitlab-Token is taken.
  const delivery = await fetch(`${server.url}/api/deploy/${app.refreshToken}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': hooks[0]!.token },
    body: JSON.stringify({ ...sample('gitlab-push'), ref: 'refs/heads/other' }),
  });
  t.match(await delivery.json(), { reason: /branch not watched/ }, 'signed with the registered secret');
  // A new refresh token moves the webhook.
  await ok(client.post('application.refreshToken', { applicationId: app.applicationId }), 'refreshToken');
  const token = (await client.get('application.one', { applicationId: app.applicationId })).body.refreshToken;
  hooks = gitlab.webhooks.get('team/app') ?? [];
  t.same(
    hooks.map(h => h.url),
    [`${publicUrl}/api/deploy/${token}`],
    'registered anew at the new URL, the old one removed',
  );
  await ok(client.post('application.update', { applicationId: app.applicationId, name: 'renamed' }), 'application.update');
  t.equal(gitlab.webhooks.get('team/app')?.length, 1, 'an unrelated change leaves it');
  await ok(client.post('application.disconnectGitProvider', { applicationId: app.applicationId }), 'disconnectGitProvider');
  t.same(gitlab.webhooks.get('team/app'), [], 'removed on unlink');

  // A compose stack linked to Bitbucket with compose.update; deleting the stack removes its webhook.
  const made = await ok(client.post('compose.create', { name: 'bb stack', environmentId, appName: `linked-bb-${stamp}` }), 'compose.create');
  const secret = randomBytes(20).toString('hex');
  await ok(
    client.post('compose.update', {
      composeId: made.composeId,
      sourceType: 'bitbucket',
      bitbucketId: bb.bitbucketId,
      bitbucketOwner: 'team',
      bitbucketRepository: 'app',
      bitbucketBranch: 'main',
      webhookSecret: secret,
    }),
    'compose.update',
  );
  t.match(bitbucket.webhooks.get('team/app'), [{ url: `${publicUrl}/api/deploy/compose/${made.refreshToken}`, secret }], 'registered with the workload secret');
  t.same(
    bitbucket.webhooks.get('team/app')?.[0]?.events,
    ['repo:push', 'pullrequest:created', 'pullrequest:updated', 'pullrequest:fulfilled', 'pullrequest:rejected'],
    'for pushes and pull requests (previews)',
  );
  await ok(client.post('compose.delete', { composeId: made.composeId, deleteVolumes: true }), 'compose.delete');
  t.same(bitbucket.webhooks.get('team/app'), [], 'removed with the stack');

  // An application linked to Gitea: a new webhook secret registers the webhook anew with it; deleting the application removes it.
  const gt = await ok(client.post('gitea.create', { name: 'Gitea', giteaUrl: gitea.url, ...gitea.issue(3600) }), 'gitea.create');
  await ok(
    client.post('application.saveGiteaProvider', { applicationId: app.applicationId, giteaId: gt.giteaId, giteaOwner: 'team', giteaRepository: 'app', giteaBranch: 'main', giteaBuildPath: '/' }),
    'saveGiteaProvider',
  );
  t.match(gitea.webhooks.get('team/app'), [{ url: `${publicUrl}/api/deploy/${token}` }], 'registered on Gitea');
  t.same(gitea.webhooks.get('team/app')?.[0]?.events, ['push', 'pull_request'], 'for pushes and pull requests (previews)');
  const newSecret = randomBytes(20).toString('hex');
  await ok(client.post('application.update', { applicationId: app.applicationId, webhookSecret: newSecret }), 'application.update');
  t.match(gitea.webhooks.get('team/app'), [{ url: `${publicUrl}/api/deploy/${token}`, secret: newSecret }], 'registered anew with the new secret');
  await ok(client.post('application.delete', { applicationId: app.applicationId }), 'application.delete');
  t.same(gitea.webhooks.get('team/app'), [], 'removed with the application');
});

t.test("triggerType tag: a tag push deploys the tag's commit, not the branch's head", async t => {
  const tagged = await commitFiles(repo.dir, { 'docker-compose.yml': stack('v3') }, 'release one');
  await promisify(execFile)('git', ['-C', repo.dir, 'tag', 'v1.0.0', tagged]);
  const head = await commitFiles(repo.dir, { 'docker-compose.yml': stack('v4') }, 'after the tag');
  const made = await ok(client.post('compose.create', { name: 'tagged', environmentId, appName: `linked-tag-${stamp}` }), 'compose.create');
  t.teardown(() => client.post('compose.delete', { composeId: made.composeId, deleteVolumes: true }));
  await ok(client.post('compose.update', { composeId: made.composeId, sourceType: 'git', customGitUrl: repo.dir, customGitBranch: 'main', triggerType: 'tag' }), 'compose.update');
  const res = await fetch(`${server.url}/api/deploy/compose/${made.refreshToken}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'tag-1' },
    body: JSON.stringify(githubPush({ ref: 'refs/tags/v1.0.0', sha: tagged, message: 'release one' })),
  });
  const answer = (await res.json()) as Record<string, any>;
  t.equal(res.status, 202, JSON.stringify(answer));
  const done = await deploymentFinished(client, answer.deploymentId);
  t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
  t.notOk('checkout' in done, "the tag is Berth's own: not answered");
  const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
  t.match(log, new RegExp(`Fetched ${tagged.slice(0, 7)}`), 'the tagged commit was deployed');
  t.notMatch(log, new RegExp(head.slice(0, 7)), "not the branch's head");
});
