// Push to deploy against a running Berth: a local repository gets real commits, then each
// provider's sample delivery (GitHub's from @octokit/webhooks-examples), filled in with them and
// signed by that provider's algorithm, is posted to the stack's hook URL. The signed ones deploy
// the pushed commit for real (the log names it, the deployment carries its message and hash); the
// rest are answered with why and deploy nothing; the delivery log says so for each.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startTestServer, signUpAdmin, otherOrganization, deploymentFinished, makeGitRepo, commitFiles, waitFor, TEST_BASE_IMAGE, type Client } from '@berth/core/testing';
import { githubPing, githubPush } from './github-examples.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`./payloads/${name}.json`, import.meta.url), 'utf8'));
const stack = (text: string) => `services:\n  app:\n    image: ${TEST_BASE_IMAGE}\n    init: true\n    stop_grace_period: 1s\n    command: ["sleep", "3600"]\n# ${text}\n`;
const hex = (secret: string | Buffer, body: string) => createHmac('sha256', secret).update(body).digest('hex');

interface Commit {
  sha: string;
  message: string;
  files: string[];
}

/** The provider's sample (GitHub's from @octokit/webhooks-examples), filled in with the pushed ref and commit. */
function payload(provider: string, ref: string, c: Commit): Record<string, any> {
  if (provider === 'github') return githubPush({ ref, sha: c.sha, message: c.message, files: c.files });
  if (provider === 'gitea') {
    const p = sample('gitea-push');
    const commit = { ...p.commits[0], id: c.sha, message: c.message, modified: c.files };
    return { ...p, ref, after: c.sha, commits: [commit], ...(p.head_commit ? { head_commit: commit } : {}) };
  }
  if (provider === 'gitlab') {
    const p = sample(ref.startsWith('refs/tags/') ? 'gitlab-tag-push' : 'gitlab-push');
    return { ...p, ref, after: c.sha, checkout_sha: c.sha, commits: p.commits.length ? [{ ...p.commits[0], id: c.sha, message: c.message, title: c.message, modified: c.files }] : [] };
  }
  const p = sample('bitbucket-push');
  const change = p.push.changes[0];
  return { ...p, push: { changes: [{ ...change, new: { ...change.new, name: ref.replace(/^refs\/(heads|tags)\//, ''), target: { ...change.new.target, hash: c.sha, message: c.message } } }] } };
}

/** The headers each provider sends with a push, signed with its own scheme when a secret is given. */
function headersFor(provider: string, body: string, o: { secret?: string; id?: string; event?: string; timestamp?: number } = {}): Record<string, string> {
  const id = o.id ?? randomBytes(8).toString('hex');
  const s = o.secret;
  switch (provider) {
    case 'github':
      return { 'x-github-event': o.event ?? 'push', 'x-github-delivery': id, ...(s ? { 'x-hub-signature-256': `sha256=${hex(s, body)}` } : {}) };
    case 'gitea':
      return { 'x-gitea-event': o.event ?? 'push', 'x-gitea-delivery': id, 'x-github-event': 'push', ...(s ? { 'x-gitea-signature': hex(s, body) } : {}) };
    case 'bitbucket':
      return { 'x-event-key': o.event ?? 'repo:push', 'x-request-uuid': id, ...(s ? { 'x-hub-signature': `sha256=${hex(s, body)}` } : {}) };
    default: {
      // GitLab's signing token: Standard Webhooks (whsec_ + base64 key).
      const ts = String(o.timestamp ?? Math.floor(Date.now() / 1000));
      const sig = s
        ? createHmac('sha256', Buffer.from(s.slice(6), 'base64'))
            .update(`${id}.${ts}.${body}`)
            .digest('base64')
        : null;
      return { 'x-gitlab-event': o.event ?? 'Push Hook', 'x-gitlab-event-uuid': id, ...(sig ? { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` } : {}) };
    }
  }
}

t.test('push to deploy', async t => {
  const server = await startTestServer({ deploySettleSeconds: 1, deployConcurrency: 1, hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const { environmentId } = (await client.post('project.create', { name: 'Hooks' })).body.environment;
  const cleanup: (() => Promise<unknown>)[] = [];
  t.teardown(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });
  const repo = await makeGitRepo({ 'docker-compose.yml': stack('v1') });
  t.teardown(() => repo.cleanup());
  let n = 1;
  const commit = async (message: string, file = 'docker-compose.yml'): Promise<Commit> => {
    n++;
    const sha = await commitFiles(repo.dir, { [file]: file === 'docker-compose.yml' ? stack(`v${n}`) : `v${n}\n` }, message);
    return { sha, message, files: [file] };
  };

  const stamp = Date.now().toString(36);
  const created = await client.post('compose.create', { name: 'pushed', environmentId, appName: `hook-${stamp}` });
  const { composeId, refreshToken } = created.body;
  cleanup.push(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
  const githubSecret = randomBytes(20).toString('hex');
  const set = await client.post('compose.update', { composeId, sourceType: 'git', customGitUrl: repo.dir, customGitBranch: 'main', webhookSecret: githubSecret });
  t.equal(set.status, 200, JSON.stringify(set.body));
  t.match((await client.get('compose.one', { composeId })).body, { webhookSecret: null, hasWebhookSecret: true }, 'the secret is never answered');

  const hook = `${server.url}/api/deploy/compose/${refreshToken}`;
  const send = async (provider: string, body: Record<string, unknown>, o: Parameters<typeof headersFor>[2] = {}) => {
    const text = JSON.stringify(body);
    const res = await fetch(hook, { method: 'POST', headers: { 'content-type': 'application/json', ...headersFor(provider, text, o) }, body: text });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const deployments = async () => (await client.get('deployment.allByCompose', { composeId })).body as Record<string, any>[];
  const log = async () => (await client.get('compose.webhookDeliveries', { composeId })).body as Record<string, any>[];
  const deploysCommit = async (deploymentId: string, c: Commit) => {
    const done = await deploymentFinished(client, deploymentId);
    t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
    t.match(done, { title: c.message, description: `Hash: ${c.sha}` }, 'the deployment carries the commit and its message');
    const text = (await client.get('deployment.readLogs', { deploymentId })).body;
    t.match(String(typeof text === 'string' ? text : JSON.stringify(text)), new RegExp(`Fetched ${c.sha.slice(0, 7)}`), 'the pushed commit was deployed');
  };

  await t.test('GitHub: signed deploys the pushed commit; unsigned, wrong or redelivered deploys nothing', async t => {
    const c = await commit('second version');
    const body = payload('github', 'refs/heads/main', c);
    const unsigned = await send('github', body);
    t.equal(unsigned.status, 401);
    t.match(unsigned.body.reason, /missing signature.*X-Hub-Signature-256/);
    const wrong = await send('github', body, { secret: 'not-the-secret-at-all' });
    t.equal(wrong.status, 401);
    t.match(wrong.body.reason, /bad signature/);
    t.equal((await deployments()).length, 0, 'nothing deployed');

    const ok = await send('github', body, { secret: githubSecret, id: 'gh-delivery-1' });
    t.equal(ok.status, 202, JSON.stringify(ok.body));
    t.ok(ok.body.deploymentId);
    const again = await send('github', body, { secret: githubSecret, id: 'gh-delivery-1' });
    t.same(again, { status: 200, body: { message: 'already processed', reason: 'already processed', deploymentId: ok.body.deploymentId } }, "a redelivery answers the first's deployment");
    await deploysCommit(ok.body.deploymentId, c);
    t.equal((await deployments()).length, 1, 'the redelivery deployed nothing');

    const entries = await log();
    t.match(entries.slice(0, 4), [
      { provider: 'github', event: 'push', deliveryId: 'gh-delivery-1', signatureOk: true, statusCode: 200, decision: 'already processed', deploymentId: null },
      { provider: 'github', deliveryId: 'gh-delivery-1', signatureOk: true, statusCode: 202, decision: 'deployment queued', deploymentId: ok.body.deploymentId, ref: 'refs/heads/main', commit: c.sha },
      { signatureOk: false, statusCode: 401, decision: /bad signature/ },
      { signatureOk: false, statusCode: 401, decision: /missing signature/ },
    ]);

    // The audit log: the hook is the actor of the deployment it queued; the two refusals (in the
    // delivery log) and the redelivery (200, nothing decided) are no entries. auditLog.all is newest first.
    const audited = ((await client.get('auditLog.all', { resourceType: 'service' })).body as { logs: { metadata: string }[] }).logs
      .map(l => JSON.parse(l.metadata) as Record<string, any>)
      .filter(m => m.actor === 'hook:github');
    t.match(audited, [
      {
        procedure: 'compose.deploy',
        outcome: 'success',
        targetIds: { composeId, deploymentId: ok.body.deploymentId },
        input: { event: 'push', ref: 'refs/heads/main', commit: c.sha, deliveryId: 'gh-delivery-1' },
        address: '127.0.0.1',
      },
    ]);
    t.equal(audited.length, 1, 'one entry: the refusals and the redelivery changed nothing');
  });

  await t.test('each answer that deploys nothing says why', async t => {
    const c = await commit('third version');
    const before = (await deployments()).length;
    const gh = (ref: string, x = c, o = {}) => send('github', payload('github', ref, x), { secret: githubSecret, ...o });
    const reasons: [string, () => Promise<{ status: number; body: Record<string, any> }>, RegExp][] = [
      ['ping', () => send('github', githubPing(), { secret: githubSecret, event: 'ping' }), /ping received/],
      ['another event', () => send('github', { action: 'opened' }, { secret: githubSecret, event: 'issues' }), /unknown event: github "issues"/],
      ['another branch', () => gh('refs/heads/feature'), /branch not watched: feature was pushed, the workload deploys main/],
      ['a tag with triggerType push', () => gh('refs/tags/v1'), /a tag push \(v1\)/],
      ['[skip ci]', () => gh('refs/heads/main', { ...c, message: 'docs only [skip ci]' }), /skipped by the commit message \(\[skip ci\]\)/],
    ];
    for (const [what, call, reason] of reasons) {
      const res = await call();
      t.equal(res.status, 200, what);
      t.match(res.body.reason, reason, what);
    }
    t.equal((await client.post('compose.update', { composeId, watchPaths: ['services/**'] })).status, 200);
    t.match((await gh('refs/heads/main')).body.reason, /no file under watchPaths changed \(services\/\*\*\)/);
    t.equal((await client.post('compose.update', { composeId, watchPaths: null, triggerType: 'tag' })).status, 200);
    t.match((await gh('refs/heads/main')).body.reason, /trigger is tag: a push of branch main deploys nothing/);
    t.equal((await client.post('compose.update', { composeId, triggerType: 'push', autoDeploy: false })).status, 200);
    t.match((await gh('refs/heads/main')).body.reason, /autoDeploy is off/);
    t.equal((await client.post('compose.update', { composeId, autoDeploy: true })).status, 200);
    t.equal((await deployments()).length, before, 'none of them deployed');
    const decisions = (await log()).slice(0, 8).map(e => e.decision);
    t.match(decisions, [/autoDeploy/, /trigger is tag/, /watchPaths/, /skip ci/, /tag push/, /branch not watched/, /unknown event/, /ping/], 'the log says why for each, newest first');
  });

  await t.test('an unsigned redelivery (a workload without a secret) is refused as "already processed" too', async t => {
    const plain = await client.post('compose.create', { name: 'unsigned', environmentId, appName: `hook-u-${stamp}` });
    cleanup.push(() => client.post('compose.delete', { composeId: plain.body.composeId, deleteVolumes: true }));
    // autoDeploy off: each delivery that reaches the decisions says so, and nothing deploys either way.
    t.equal((await client.post('compose.update', { composeId: plain.body.composeId, sourceType: 'git', customGitUrl: repo.dir, customGitBranch: 'main', autoDeploy: false })).status, 200);
    const c = await commit('unsigned push');
    const text = JSON.stringify(payload('github', 'refs/heads/main', c));
    const post = async (id: string) => {
      const res = await fetch(`${server.url}/api/deploy/compose/${plain.body.refreshToken}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headersFor('github', text, { id }) },
        body: text,
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    t.match(await post('plain-1'), { status: 200, body: { reason: 'autoDeploy is off for this workload' } }, 'unsigned, a first delivery reaches the decisions');
    t.match(await post('plain-1'), { status: 200, body: { reason: 'already processed' } }, 'its redelivery is refused');
    t.match(await post('plain-2'), { status: 200, body: { reason: 'autoDeploy is off for this workload' } }, 'another id reaches the decisions again');
    t.match((await client.get('compose.webhookDeliveries', { composeId: plain.body.composeId })).body, [
      { deliveryId: 'plain-2', signatureOk: null, decision: /autoDeploy/ },
      { deliveryId: 'plain-1', signatureOk: null, decision: 'already processed' },
      { deliveryId: 'plain-1', signatureOk: null, decision: /autoDeploy/ },
    ]);
  });

  await t.test('GitLab signing token (Standard Webhooks): a stale timestamp is refused, a fresh one deploys', async t => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    t.equal((await client.post('compose.update', { composeId, webhookSecret: secret })).status, 200);
    const c = await commit('gitlab push');
    const body = payload('gitlab', 'refs/heads/main', c);
    const stale = await send('gitlab', body, { secret, timestamp: Math.floor(Date.now() / 1000) - 3600 });
    t.equal(stale.status, 401);
    t.match(stale.body.reason, /stale delivery/);
    t.equal((await send('gitlab', body)).status, 401, 'unsigned');
    const ok = await send('gitlab', body, { secret });
    t.equal(ok.status, 202, JSON.stringify(ok.body));
    await deploysCommit(ok.body.deploymentId, c);
  });

  for (const provider of ['gitea', 'bitbucket']) {
    await t.test(`${provider}: a signed push deploys the pushed commit; a wrong signature is refused`, async t => {
      const secret = randomBytes(20).toString('hex');
      t.equal((await client.post('compose.update', { composeId, webhookSecret: secret })).status, 200);
      const c = await commit(`${provider} push`);
      const body = payload(provider, 'refs/heads/main', c);
      t.equal((await send(provider, body, { secret: `${secret}x` })).status, 401);
      const ok = await send(provider, body, { secret });
      t.equal(ok.status, 202, JSON.stringify(ok.body));
      await deploysCommit(ok.body.deploymentId, c);
      t.match((await log())[0], { provider, signatureOk: true, statusCode: 202 });
    });
  }

  await t.test('a burst: the newer push supersedes the queued one, one deployment of the newer commit', async t => {
    // Another stack deploying holds the host's one slot, so both pushes queue behind it.
    const blocker = await client.post('compose.create', { name: 'blocker', environmentId, appName: `hook-b-${stamp}`, composeFile: stack('blocker') });
    cleanup.push(() => client.post('compose.delete', { composeId: blocker.body.composeId, deleteVolumes: true }));
    const secret = randomBytes(20).toString('hex');
    t.equal((await client.post('compose.update', { composeId, webhookSecret: secret })).status, 200);
    const first = await commit('burst one');
    const second = await commit('burst two');
    t.equal((await client.post('compose.deploy', { composeId: blocker.body.composeId })).status, 200);
    const a = await send('github', payload('github', 'refs/heads/main', first), { secret });
    const b = await send('github', payload('github', 'refs/heads/main', second), { secret });
    t.equal(a.status, 202);
    t.equal(b.status, 202);
    const superseded = await waitFor('the first cancelled', async () => {
      const d = (await client.get('deployment.one', { deploymentId: a.body.deploymentId })).body;
      return d.state === 'queued' ? undefined : d;
    });
    t.equal(superseded.state, 'cancelled', 'the queued deployment of the older push was superseded');
    await deploysCommit(b.body.deploymentId, second);
  });

  await t.test('an unknown token is 404; the hook needs no API key; the application kind has its own path', async t => {
    const res = await fetch(`${server.url}/api/deploy/compose/not-a-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    t.equal(res.status, 404);
    const app = await client.post('application.create', { name: 'app', environmentId });
    cleanup.push(() => client.post('application.delete', { applicationId: app.body.applicationId }));
    const { applicationId, refreshToken: appToken } = app.body;
    const secret = randomBytes(20).toString('hex');
    t.equal((await client.post('application.update', { applicationId, sourceType: 'git', customGitUrl: repo.dir, customGitBranch: 'main', webhookSecret: secret })).status, 200);
    t.match((await client.get('application.one', { applicationId })).body, { webhookSecret: null, hasWebhookSecret: true });
    const body = JSON.stringify(payload('github', 'refs/heads/other', { sha: repo.commit, message: 'x', files: [] }));
    const post = (headers: Record<string, string>) => fetch(`${server.url}/api/deploy/${appToken}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    t.equal((await post(headersFor('github', body))).status, 401);
    const answered = await post(headersFor('github', body, { secret }));
    t.equal(answered.status, 200);
    t.match(await answered.json(), { reason: /branch not watched: other/ });
    t.match((await client.get('application.webhookDeliveries', { applicationId })).body, [{ statusCode: 200, decision: /branch not watched/ }, { statusCode: 401 }]);
    t.equal((await client.get('compose.webhookDeliveries', { composeId: 'no-such-stack' })).status, 404);
    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('compose.webhookDeliveries', { composeId })).status, 404, "another organization's stack log is 404");
    t.equal((await other.client.get('application.webhookDeliveries', { applicationId })).status, 404, "another organization's application log is 404");
  });
});
