// Preview deployments against a running Berth: an application deploying from a local repository
// gets GitHub's pull_request deliveries (@octokit/webhooks-examples', filled in with real commits of a
// branch and signed as GitHub signs) on its push hook. Opened deploys the branch for real as its own
// service at the wildcard's domain with BERTH_PREVIEW_URL in its env and build; synchronize
// redeploys it at the same domain; closed removes service, domain and record; the gates answer why;
// another organization sees none of it; the age limit removes what is too old.
import { createHmac, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import t from 'tap';
import { startTestServer, signUpAdmin, otherOrganization, deploymentFinished, makeGitRepo, commitFiles, manualClock, TEST_BASE_IMAGE } from '@berth/core/testing';
import { githubPullRequest } from '../../deploy-hook/test/github-examples.ts';
import { serviceStatus } from './service-status.ts';

const run = promisify(execFile);
const docker = new Docker();
const DAY = 86_400_000;
// The build argument is written into the image; the service stops at once when removed (TERM ends it).
const DOCKERFILE = `FROM ${TEST_BASE_IMAGE}\nARG BERTH_PREVIEW_URL\nRUN echo "built for $BERTH_PREVIEW_URL" > /built\nCMD ["sh", "-c", "trap \\"exit 0\\" TERM; sleep 3600 & wait"]\n`;

interface Pr {
  action: string;
  number: number;
  sha: string;
  branch?: string;
  labels?: string[];
  association?: string;
  fork?: boolean;
}

/** GitHub's example of the action, filled in with the pull request's number, branches, head commit, labels and author. */
function pullRequest(p: Pr): Record<string, any> {
  const s = githubPullRequest({ action: p.action, number: p.number, branch: p.branch ?? 'feature', sha: p.sha, labels: p.labels ?? [], ...(p.fork ? { headRepository: 'someone/Hello-World' } : {}) });
  return {
    ...s,
    pull_request: {
      ...s.pull_request,
      id: 279147400 + p.number,
      html_url: `https://github.com/Codertocat/Hello-World/pull/${p.number}`,
      title: `Change number ${p.number}`,
      author_association: p.association ?? 'OWNER',
    },
  };
}

t.test('preview deployments from GitHub pull requests', async t => {
  const server = await startTestServer({ proxy: 'none', deploySettleSeconds: 1, deployConcurrency: 1, hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const { environmentId } = (await client.post('project.create', { name: 'Previews' })).body.environment;
  const repo = await makeGitRepo({ Dockerfile: DOCKERFILE });
  t.teardown(() => repo.cleanup());
  await run('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'feature']);
  const first = await commitFiles(repo.dir, { 'page.txt': 'one\n' }, 'feature: first');

  const stamp = Date.now().toString(36);
  const created = await client.post('application.create', { name: 'web', environmentId, appName: `pv-${stamp}` });
  const { applicationId, refreshToken, appName } = created.body;
  t.teardown(() => client.post('application.delete', { applicationId }));
  const secret = randomBytes(20).toString('hex');
  const set = await client.post('application.update', {
    applicationId,
    sourceType: 'git',
    customGitUrl: repo.dir,
    customGitBranch: 'main',
    buildType: 'dockerfile',
    dockerfile: 'Dockerfile',
    webhookSecret: secret,
    isPreviewDeploymentsActive: true,
    previewWildcard: '*.preview.test',
    previewPort: 8080,
    previewEnv: 'STAGE=preview',
  });
  t.equal(set.status, 200, JSON.stringify(set.body));

  const send = async (p: Pr) => {
    const text = JSON.stringify(pullRequest(p));
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': randomBytes(8).toString('hex'),
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`,
    };
    const res = await fetch(`${server.url}/api/deploy/${refreshToken}`, { method: 'POST', headers, body: text });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const previews = async () => (await client.get('previewDeployment.all', { applicationId })).body as Record<string, any>[];
  const serviceEnv = async (name: string) => {
    const spec = (await docker.getService(name).inspect()) as { Spec: { TaskTemplate: { ContainerSpec: { Env?: string[]; Image: string } } } };
    return spec.Spec.TaskTemplate.ContainerSpec;
  };
  const previewName = `${appName}-pr-7`;
  const host = `${previewName}.preview.test`;
  const url = `http://${host}`;
  const deploysCommit = async (deploymentId: string, sha: string) => {
    const done = await deploymentFinished(client, deploymentId);
    t.equal(done.state, 'done', done.errorMessage ?? 'deployed');
    t.match(done, { previewDeploymentId: String, isPreviewDeployment: true });
    const log = (await client.get('deployment.readLogs', { deploymentId })).body;
    t.match(String(typeof log === 'string' ? log : JSON.stringify(log)), new RegExp(`Fetched ${sha.slice(0, 7)}`), "the pull request's head commit was built");
  };

  let previewDeploymentId = '';
  let domainId = '';
  await t.test('opened: the branch deployed as its own service at the wildcard domain, with BERTH_PREVIEW_URL', async t => {
    const opened = await send({ action: 'opened', number: 7, sha: first });
    t.equal(opened.status, 202, JSON.stringify(opened.body));
    await deploysCommit(opened.body.deploymentId, first);
    const listed = await previews();
    t.equal(listed.length, 1);
    const preview = listed[0]!;
    t.match(preview, {
      appName: previewName,
      applicationId,
      branch: 'feature',
      pullRequestNumber: '7',
      pullRequestId: String(279147407),
      pullRequestURL: 'https://github.com/Codertocat/Hello-World/pull/7',
      pullRequestTitle: 'Change number 7',
      pullRequestCommentId: '',
      previewStatus: 'done',
      domain: { host, port: 8080, https: false, domainType: 'preview' },
      deployments: [{ deploymentId: opened.body.deploymentId, status: 'done' }],
    });
    t.equal(Date.parse(preview.expiresAt) - Date.parse(preview.createdAt), 14 * DAY, 'expiresAt is createdAt plus previewMaxAgeDays');
    previewDeploymentId = preview.previewDeploymentId;
    domainId = preview.domainId;
    t.equal(preview.domain.domainId, domainId);
    const spec = await serviceEnv(previewName);
    t.ok(spec.Env?.includes(`BERTH_PREVIEW_URL=${url}`), 'the URL is in its env');
    t.ok(spec.Env?.includes('STAGE=preview'), 'previewEnv is in its env');
    const built = await run('docker', ['run', '--rm', '--entrypoint', 'cat', spec.Image.split('@')[0]!, '/built']);
    t.equal(built.stdout.trim(), `built for ${url}`, 'and in its build args');
    t.equal((await client.get('application.one', { applicationId })).body.applicationStatus, 'idle', "the application's own status is untouched");
    t.match((await client.get('application.one', { applicationId })).body.previewDeployments, [{ previewDeploymentId, appName: previewName }]);
    t.match((await client.get('application.webhookDeliveries', { applicationId })).body[0], {
      event: 'pull_request',
      statusCode: 202,
      decision: 'preview deployment queued',
      ref: 'refs/heads/feature',
      commit: first,
    });
  });

  await t.test('synchronize: redeployed at the same domain; redeploy through the API', async t => {
    const second = await commitFiles(repo.dir, { 'page.txt': 'two\n' }, 'feature: second');
    const sync = await send({ action: 'synchronize', number: 7, sha: second });
    t.equal(sync.status, 202, JSON.stringify(sync.body));
    await deploysCommit(sync.body.deploymentId, second);
    const one = (await client.get('previewDeployment.one', { previewDeploymentId })).body;
    t.match(one, { previewDeploymentId, appName: previewName, domainId, domain: { host } }, 'the same service and domain');
    t.equal(one.deployments.length, 2);
    const again = await client.post('previewDeployment.redeploy', { previewDeploymentId, title: 'again' });
    t.equal(again.status, 200);
    t.equal(again.body, true);
    const done = await deploymentFinished(client, again.headers.get('x-berth-deployment-id')!);
    t.match(done, { state: 'done', title: 'again' });
  });

  await t.test("previewDomainTemplate: the preview's host from the pull request's number, the application and the branch", async t => {
    const bad = await client.post('application.update', { applicationId, previewDomainTemplate: 'pr-${number}.example.test' });
    t.equal(bad.status, 400, 'an unknown placeholder is refused');
    t.match(JSON.stringify(bad.body), /previewDomainTemplate/, 'naming the field');
    t.equal((await client.post('application.update', { applicationId, previewDomainTemplate: 'pr-${prNumber}-${branch}.${appName}.template.test' })).status, 200);
    const opened = await send({ action: 'opened', number: 8, sha: first, branch: 'Feature/Login_Page' });
    t.equal(opened.status, 202, JSON.stringify(opened.body));
    const preview = (await previews()).find(p => p.pullRequestNumber === '8');
    t.equal(preview?.domain?.host, `pr-8-feature-login-page.${appName}.template.test`, 'the template, the branch made a DNS label (the wildcard is not used)');
    await deploymentFinished(client, opened.body.deploymentId);
    t.equal((await send({ action: 'closed', number: 8, sha: first, branch: 'Feature/Login_Page' })).status, 200);
    t.notOk(
      (await previews()).some(p => p.pullRequestNumber === '8'),
      'closed: removed',
    );
    t.equal((await client.post('application.update', { applicationId, previewDomainTemplate: null })).status, 200);
  });

  await t.test('the gates: each answer says why and deploys nothing', async t => {
    const sha = first;
    t.match(await send({ action: 'opened', number: 0, sha }), { status: 200, body: { reason: /names no pull request/ } });
    t.match(await send({ action: 'labeled', number: 7, sha }), { status: 200, body: { reason: /pull request labeled: only opened, reopened, synchronize and closed/ } });
    // A plain git URL has no provider to ask who may push: a fork is refused whatever the event says of its author.
    const cannotTell =
      "pull request from a fork by Codertocat: the application's source (git) cannot tell whether they have write access to Codertocat/Hello-World: not deployed while previewRequireCollaboratorPermissions is on";
    t.match(await send({ action: 'opened', number: 8, sha, fork: true, association: 'NONE' }), { status: 200, body: { reason: cannotTell } });
    t.match(await send({ action: 'opened', number: 8, sha, fork: true, association: 'OWNER' }), { status: 200, body: { reason: cannotTell } }, "the event's author_association is not believed");
    t.match(await send({ action: 'opened', number: 8, sha, branch: 'feature' }).then(r => r.status), 202, 'a second preview within previewLimit 3');
    t.equal((await client.post('application.update', { applicationId, previewLimit: 2, previewLabels: ['preview'] })).status, 200);
    t.match(await send({ action: 'opened', number: 9, sha }), { status: 200, body: { reason: 'label gate: the pull request carries none of previewLabels (preview)' } });
    t.match(await send({ action: 'opened', number: 9, sha, labels: ['preview'] }), { status: 200, body: { reason: 'preview limit reached: 2 live previews (previewLimit 2)' } });
    t.equal((await client.post('application.update', { applicationId, isPreviewDeploymentsActive: false })).status, 200);
    t.match(await send({ action: 'opened', number: 9, sha, labels: ['preview'] }), { status: 200, body: { reason: /previews are off/ } });
    t.equal((await client.post('application.update', { applicationId, isPreviewDeploymentsActive: true, previewLabels: null })).status, 200);
    t.equal((await previews()).length, 2, 'no preview for the refused ones');
    const decisions = ((await client.get('application.webhookDeliveries', { applicationId })).body as Record<string, any>[]).slice(0, 7).map(d => d.decision);
    t.match(decisions, [/previews are off/, /preview limit/, /label gate/, 'preview deployment queued', /cannot tell/, /cannot tell/, /labeled/], 'the delivery log keeps each reason');
  });

  await t.test("another organization's previews are 404", async t => {
    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('previewDeployment.all', { applicationId })).status, 404);
    t.equal((await other.client.get('previewDeployment.one', { previewDeploymentId })).status, 404);
    t.equal((await other.client.post('previewDeployment.redeploy', { previewDeploymentId })).status, 404);
    t.equal((await other.client.post('previewDeployment.delete', { previewDeploymentId })).status, 404);
    t.equal((await client.get('previewDeployment.one', { previewDeploymentId: 'no-such-preview' })).status, 404);
  });

  await t.test('closed: service, domain and record removed; delete and the age limit remove the others', async t => {
    const closed = await send({ action: 'closed', number: 7, sha: first });
    t.match(closed, { status: 200, body: { reason: 'preview removed: pull request #7 closed' } });
    t.equal(await serviceStatus(previewName), 404, 'the service is gone');
    t.equal((await client.get('domain.one', { domainId })).status, 404, 'the domain is gone');
    t.equal((await client.get('previewDeployment.one', { previewDeploymentId })).status, 404, 'the record is gone');
    // #8 was queued behind #7's runs: removed by the age limit, with the clock moved past it.
    const eight = (await previews())[0]!;
    t.match(eight, { pullRequestNumber: '8' });
    const clock = manualClock(server);
    const { previews: service, orm } = server.kernel.container.cradle;
    t.equal(await service.expire(orm.em.fork()), 0, 'nothing is old yet');
    clock.advance(14 * DAY + 1000);
    t.equal(await service.expire(orm.em.fork()), 1, 'older than previewMaxAgeDays: removed');
    t.same(await previews(), []);
    t.equal(await serviceStatus(eight.appName), 404, 'its service is gone');
    // delete: a new one, removed through the API.
    const nine = await send({ action: 'opened', number: 9, sha: first });
    t.equal(nine.status, 202);
    const made = (await previews())[0]!;
    t.equal((await client.post('previewDeployment.delete', { previewDeploymentId: made.previewDeploymentId })).body, true);
    t.same(await previews(), []);
    t.equal((await client.get('domain.one', { domainId: made.domainId })).status, 404);
    // The application's deletion takes its previews with it.
    t.equal((await send({ action: 'opened', number: 10, sha: first })).status, 202);
    const ten = (await previews())[0]!;
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
    t.equal((await client.get('previewDeployment.one', { previewDeploymentId: ten.previewDeploymentId })).status, 404, 'gone with the application');
    t.equal((await client.get('domain.one', { domainId: ten.domainId })).status, 404);
  });
});
