// Previews from each of the four git providers against one running Berth: an application per
// provider, deploying from the provider's loopback stand-in (the same local repository behind
// each, cloned with the connection's credential), gets the provider's documented pull (merge)
// request sample, signed by the provider's scheme, on its push hook. Opened deploys the branch for
// real and leaves one comment on the pull request with the status and the URL; an update redeploys
// the new commit and updates that comment in place; closing removes the preview and says so in the
// comment. At previewLimit, the pull request is told once.
import { createHash, createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import t, { type Test } from 'tap';
import { startTestServer, signUpAdmin, deploymentFinished, makeGitRepo, commitFiles, freePort, waitFor, TEST_BASE_IMAGE, TEST_CADDY_IMAGE } from '@berth/core/testing';
import { through } from '../../domain/test/http-through.ts';
import { startFakeGithub } from '../../../providers/git-github/test/github-api.ts';
import { startFakeGitlab } from '../../../providers/git-gitlab/test/gitlab-api.ts';
import { startFakeGitea } from '../../../providers/git-gitea/test/gitea-api.ts';
import { startFakeBitbucket } from '../../../providers/git-bitbucket/test/bitbucket-api.ts';
import { githubPullRequest } from '../../deploy-hook/test/github-examples.ts';
import { serviceStatus } from './service-status.ts';

const run = promisify(execFile);
const docker = new Docker();
const sample = (name: string) => JSON.parse(readFileSync(new URL(`./payloads/${name}`, import.meta.url), 'utf8'));
// The page is the branch's page.txt, served on the preview port; TERM ends it at once. The image
// keeps the hash of the build secret it was given (a required secret mount: the build fails without it).
// BuildKit's cache key of a step leaves its secrets out: the run's nonce keeps an earlier run's layer from being reused.
const DOCKERFILE = `FROM ${TEST_BASE_IMAGE}\nCOPY page.txt /www/index.html\nRUN --mount=type=secret,id=PREVIEW_TOKEN,required=true sh -c 'sha256sum < /run/secrets/PREVIEW_TOKEN | cut -c1-64 > /token.sha256' # ${randomBytes(6).toString('hex')}\nCMD ["sh", "-c", "trap \\"exit 0\\" TERM; httpd -f -p 8080 -h /www & wait"]\n`;
const PROXY = `berth-test-proxy-${randomBytes(3).toString('hex')}`;
const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

type Step = 'open' | 'update' | 'close';
interface Pr {
  step: Step;
  branch: string;
  number: number;
  sha: string;
  previous?: string;
  /** From the fork someone/app, by its author with write access to team/app or by one without. */
  fork?: 'writer' | 'outsider';
}

const appKey = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
const github = await startFakeGithub(t, { publicKeyPem: appKey.publicKey, privateKeyPem: appKey.privateKey, appId: '4242', installationId: 77 });
const gitlab = await startFakeGitlab(t);
const gitea = await startFakeGitea(t);
const bitbucket = await startFakeBitbucket(t);

// One branch per provider's pull request: the four run at once.
const NAMES = ['github', 'gitlab', 'gitea', 'bitbucket'] as const;
const repo = await makeGitRepo({ Dockerfile: DOCKERFILE, 'page.txt': 'main\n' });
t.teardown(repo.cleanup);
const branches: Record<string, string> = { main: repo.commit };
for (const name of NAMES) {
  await run('git', ['-C', repo.dir, 'checkout', '-q', '-b', `feature-${name}`, 'main']);
  branches[`feature-${name}`] = await commitFiles(repo.dir, { 'page.txt': `${name}: one\n` }, `${name}: first`);
}
await github.addGitRepository('team', 'app', repo.dir, branches);
await gitlab.addGitProject('team', 'app', repo.dir, branches);
await gitea.addGitRepo('team', 'app', repo.dir, branches);
await bitbucket.addGitRepo('team', 'app', repo.dir, branches);
// The fork someone/app: the same branch names, with a page only the fork has (a clone of team/app's
// branch would serve another).
const fork = await makeGitRepo({ Dockerfile: DOCKERFILE, 'page.txt': 'main\n' });
t.teardown(fork.cleanup);
const forkBranches: Record<string, string> = { main: fork.commit };
for (const name of NAMES) {
  await run('git', ['-C', fork.dir, 'checkout', '-q', '-b', `feature-${name}`, 'main']);
  forkBranches[`feature-${name}`] = await commitFiles(fork.dir, { 'page.txt': `${name}: from the fork\n` }, `${name}: in the fork`);
}
await github.addGitRepository('someone', 'app', fork.dir, forkBranches);
await gitlab.addGitProject('someone', 'app', fork.dir, forkBranches);
await gitea.addGitRepo('someone', 'app', fork.dir, forkBranches);
await bitbucket.addGitRepo('someone', 'app', fork.dir, forkBranches);
// Who may push to team/app: the fork's "forker" may (GitLab Developer, Gitea write, Bitbucket write); "drive-by" may not (Reporter, read, none).
const WRITER_UUID = '{5b2f7e0a-0000-4000-8000-000000000051}';
const OUTSIDER_UUID = '{5b2f7e0a-0000-4000-8000-000000000052}';
gitlab.members.set(
  'team/app',
  new Map([
    [51, { username: 'forker', accessLevel: 30 }],
    [52, { username: 'drive-by', accessLevel: 20 }],
  ]),
);
gitea.permissions.set(
  'team/app',
  new Map([
    ['forker', 'write'],
    ['drive-by', 'read'],
  ]),
);
bitbucket.permissions.set('team/app', new Map([[WRITER_UUID, 'write']]));
github.permissions.set(
  'team/app',
  new Map([
    ['forker', 'write'],
    ['drive-by', 'read'],
  ]),
);
const forker = (pr: Pr) => (pr.fork === 'writer' ? 'forker' : 'drive-by');
/** The pull request as each service holds it (what Berth reads through its API): its head, in the fork for a fork's, and its author. */
const held = (pr: Pr) => ({ head: pr.fork ? 'someone/app' : 'team/app', branch: pr.branch, sha: pr.sha, base: 'main' });
/** A push to a pull request's branch: a new commit, fetched into each service's bare copy (one push at a time: one working tree). */
let pushing: Promise<unknown> = Promise.resolve();
const push = (branch: string) => {
  const pushed = pushing.then(async () => {
    await run('git', ['-C', repo.dir, 'checkout', '-q', branch]);
    const sha = await commitFiles(repo.dir, { 'page.txt': `${branch}: two\n` }, `${branch}: second`);
    for (const root of [github.git.root, gitlab.git.root, gitea.git.root, bitbucket.git.root])
      await run('git', ['--git-dir', `${root}/team/app.git`, 'fetch', '-q', '--', repo.dir, `+refs/heads/${branch}:refs/heads/${branch}`]);
    return sha;
  });
  pushing = pushed.catch(() => undefined);
  return pushed;
};

const proxyPort = await freePort();
const server = await startTestServer({
  // Where the providers' webhooks point (a link with autoDeploy on needs it); the test delivers the events itself.
  publicUrl: 'https://berth.example.com',
  proxy: 'caddy',
  proxyImage: TEST_CADDY_IMAGE,
  proxyHttpPort: proxyPort,
  proxyHttpsPort: await freePort(),
  deploySettleSeconds: 1,
  deployConcurrency: 4,
  providers: { git: { bitbucket: { options: { apiUrl: bitbucket.apiUrl, webUrl: bitbucket.webUrl } } }, proxy: { caddy: { options: { serviceName: PROXY } } } },
});
t.teardown(async () => {
  await docker
    .getService(PROXY)
    .remove()
    .catch(() => undefined);
  await server.destroy();
});
/** The page the proxy (Caddy) answers for a host, once it answers 200 with it. */
const served = (host: string, page: string) =>
  waitFor(
    `${page.trim()} at ${host} through the proxy`,
    async () => {
      const a = await through(proxyPort, host);
      return a?.status === 200 && a.body === page ? a.body : undefined;
    },
    { timeout: 30_000, interval: 200 },
  );
const { client, userId, organizationId } = await signUpAdmin(server);
const { environmentId } = (await client.post('project.create', { name: 'Previews' })).body.environment;
const ok = async (r: Promise<{ status: number; body: any }>, what: string) => {
  const reply = await r;
  if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
};

// The connections: GitHub's App record as the manifest flow leaves it, the others as their create takes them.
const { githubId } = await server.kernel.container.cradle.gitProviders.createConnection(
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
  server.kernel.container.cradle.orm.em.fork(),
);
const glToken = gitlab.issue(7200);
const { gitlabId } = await ok(client.post('gitlab.create', { authId: 'x', name: 'GitLab', gitlabUrl: gitlab.url, ...glToken }), 'gitlab.create');
const gtToken = gitea.issue(7200);
const { giteaId } = await ok(client.post('gitea.create', { name: 'Gitea', giteaUrl: gitea.url, ...gtToken }), 'gitea.create');
const { bitbucketId } = await ok(client.post('bitbucket.create', bitbucket.connection('Bitbucket')), 'bitbucket.create');

interface Provider {
  name: string;
  save: (applicationId: string) => Record<string, unknown>;
  saveOp: string;
  /** The delivery: its headers (signed with the secret) and body. */
  delivery: (pr: Pr, secret: string) => { headers: Record<string, string>; text: string };
  /** The bodies of the pull request's comments, on the service's side. */
  comments: (number: number) => string[];
  /** Puts the pull request on the service's side, as the event describes it. */
  hold: (pr: Pr) => void;
}

/** Gitea's pull_request sample (GitHub's shape), as the pull request's event says; a fork's names its repository and its author. */
function pullRequestPayload(file: string, action: string, ids: number, pr: Pr): string {
  const s = sample(file);
  const repoNamed = (full: string) => ({ ...s.pull_request.base.repo, full_name: full, name: 'app' });
  const head = { ...s.pull_request.head, ref: pr.branch, sha: pr.sha, ...(pr.fork ? { repo: repoNamed('someone/app') } : {}) };
  const base = { ...s.pull_request.base, ref: 'main', ...(pr.fork ? { repo: repoNamed('team/app') } : {}) };
  const author = pr.fork ? { user: { ...s.pull_request.user, id: 900, login: forker(pr) } } : {};
  return JSON.stringify({ ...s, action, number: pr.number, pull_request: { ...s.pull_request, id: ids + pr.number, number: pr.number, head, base, ...author } });
}

const providers: Provider[] = [
  {
    name: 'github',
    saveOp: 'application.saveGithubProvider',
    save: applicationId => ({ applicationId, owner: 'team', repository: 'app', branch: 'main', buildPath: '/', githubId }),
    delivery: (pr, secret) => {
      const action = { open: 'opened', update: 'synchronize', close: 'closed' }[pr.step];
      const s = githubPullRequest({ action, number: pr.number, branch: pr.branch, sha: pr.sha, repository: 'team/app', ...(pr.fork ? { headRepository: 'someone/app' } : {}) });
      const author = pr.fork ? { user: { ...s.pull_request.user, id: 900, login: forker(pr) }, author_association: pr.fork === 'writer' ? 'COLLABORATOR' : 'NONE' } : {};
      const text = JSON.stringify({ ...s, pull_request: { ...s.pull_request, id: 5000 + pr.number, ...author } });
      return { text, headers: { 'x-github-event': 'pull_request', 'x-github-delivery': randomBytes(8).toString('hex'), 'x-hub-signature-256': `sha256=${hmac(secret, text)}` } };
    },
    comments: n => github.comments.get(`team/app#${n}`) ?? [],
    hold: pr => github.pullRequests.set(`team/app#${pr.number}`, { ...held(pr), author: { id: 900, login: pr.fork ? forker(pr) : 'Codertocat' }, state: pr.step === 'close' ? 'closed' : 'open' }),
  },
  {
    name: 'gitlab',
    saveOp: 'application.saveGitlabProvider',
    save: applicationId => ({
      applicationId,
      gitlabBranch: 'main',
      gitlabBuildPath: '/',
      gitlabOwner: 'team',
      gitlabRepository: 'app',
      gitlabId,
      gitlabPathNamespace: 'team/app',
      gitlabProjectId: gitlab.projects[0]!.id,
    }),
    delivery: (pr, secret) => {
      const s = sample('gitlab-merge_request.json');
      const action = { open: 'open', update: 'update', close: 'merge' }[pr.step];
      const attributes = {
        ...s.object_attributes,
        id: 6000 + pr.number,
        iid: pr.number,
        source_branch: pr.branch,
        target_branch: 'main',
        action,
        last_commit: { ...s.object_attributes.last_commit, id: pr.sha },
        ...(pr.previous ? { oldrev: pr.previous } : {}),
      };
      const author = pr.fork === 'writer' ? 51 : 52;
      // A fork's merge request: its source project, the target's path, and its author (the event's user).
      const forked = pr.fork
        ? {
            project: { ...s.project, id: gitlab.projects[0]!.id, path_with_namespace: 'team/app' },
            user: { ...s.user, id: author, username: forker(pr) },
            object_attributes: {
              ...attributes,
              author_id: author,
              source_project_id: gitlab.projects.find(x => x.namespace === 'someone')!.id,
              target_project_id: gitlab.projects[0]!.id,
              source: { ...s.object_attributes.source, path_with_namespace: 'someone/app' },
              target: { ...s.object_attributes.target, path_with_namespace: 'team/app' },
            },
          }
        : {};
      const text = JSON.stringify({ ...s, object_attributes: attributes, ...forked });
      return { text, headers: { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-event-uuid': randomBytes(8).toString('hex'), 'x-gitlab-token': secret } };
    },
    comments: n => gitlab.notes.get(`team/app!${n}`) ?? [],
    hold: pr =>
      gitlab.mergeRequests.set(`team/app!${pr.number}`, {
        ...held(pr),
        author: pr.fork ? { id: pr.fork === 'writer' ? 51 : 52, login: forker(pr) } : { id: 1, login: 'root' },
        state: pr.step === 'close' ? 'merged' : 'opened',
      }),
  },
  {
    name: 'gitea',
    saveOp: 'application.saveGiteaProvider',
    save: applicationId => ({ applicationId, giteaBranch: 'main', giteaBuildPath: '/', giteaOwner: 'team', giteaRepository: 'app', giteaId }),
    delivery: (pr, secret) => {
      const text = pullRequestPayload('gitea-pull_request.json', { open: 'opened', update: 'synchronized', close: 'closed' }[pr.step], 7000, pr);
      return { text, headers: { 'x-gitea-event': 'pull_request', 'x-gitea-delivery': randomBytes(8).toString('hex'), 'x-gitea-signature': hmac(secret, text) } };
    },
    comments: n => gitea.comments.get(`team/app#${n}`) ?? [],
    hold: pr => gitea.pullRequests.set(`team/app#${pr.number}`, { ...held(pr), author: { id: 900, login: pr.fork ? forker(pr) : 'gitea-admin' }, state: pr.step === 'close' ? 'closed' : 'open' }),
  },
  {
    name: 'bitbucket',
    saveOp: 'application.saveBitbucketProvider',
    save: applicationId => ({ applicationId, bitbucketBranch: 'main', bitbucketBuildPath: '/', bitbucketOwner: 'team', bitbucketRepository: 'app', bitbucketRepositorySlug: 'app', bitbucketId }),
    delivery: (pr, secret) => {
      const s = sample('bitbucket-pullrequest.json');
      const event = { open: 'pullrequest:created', update: 'pullrequest:updated', close: 'pullrequest:fulfilled' }[pr.step];
      const p = s.pullrequest;
      const text = JSON.stringify({
        ...s,
        pullrequest: {
          ...p,
          id: pr.number,
          state: pr.step === 'close' ? 'MERGED' : 'OPEN',
          // Bitbucket sends the commit's short hash.
          source: {
            ...p.source,
            branch: { name: pr.branch },
            commit: { hash: pr.sha.slice(0, 12) },
            ...(pr.fork ? { repository: { ...p.source.repository, full_name: 'someone/app', name: 'app' } } : {}),
          },
          destination: { ...p.destination, branch: { name: 'main' }, ...(pr.fork ? { repository: { ...p.destination.repository, full_name: 'team/app', name: 'app' } } : {}) },
          ...(pr.fork ? { author: { ...p.author, nickname: forker(pr), uuid: pr.fork === 'writer' ? WRITER_UUID : OUTSIDER_UUID } } : {}),
        },
      });
      return { text, headers: { 'x-event-key': event, 'x-request-uuid': `{${randomBytes(8).toString('hex')}}`, 'x-hub-signature': `sha256=${hmac(secret, text)}` } };
    },
    comments: n => bitbucket.comments.get(`team/app#${n}`) ?? [],
    hold: pr =>
      bitbucket.pullRequests.set(`team/app#${pr.number}`, {
        ...held(pr),
        author: pr.fork ? { id: pr.fork === 'writer' ? WRITER_UUID : OUTSIDER_UUID, login: forker(pr) } : { id: '{5b2f7e0a-0000-4000-8000-000000000050}', login: 'starbuck' },
        state: pr.step === 'close' ? 'MERGED' : 'OPEN',
      }),
  },
];

/** An application deploying from the provider's team/app with previews on, and what sends its hook a pull request event (signed with its secret unless told). */
async function previewApp(t: Test, p: Provider, prefix: string, more: Record<string, unknown> = {}) {
  const stamp = Date.now().toString(36);
  const { applicationId, refreshToken, appName } = await ok(client.post('application.create', { name: p.name, environmentId, appName: `${prefix}-${p.name}-${stamp}` }), 'application.create');
  t.teardown(() => client.post('application.delete', { applicationId }));
  t.equal(await ok(client.post(p.saveOp, p.save(applicationId)), p.saveOp), true, `${p.name}: the source saved`);
  const secret = randomBytes(20).toString('hex');
  await ok(
    client.post('application.update', {
      applicationId,
      buildType: 'dockerfile',
      dockerfile: 'Dockerfile',
      webhookSecret: secret,
      isPreviewDeploymentsActive: true,
      previewWildcard: `*.${p.name}.test`,
      previewPort: 8080,
      ...more,
    }),
    'application.update',
  );
  const send = async (pr: Pr, sign = secret) => {
    p.hold(pr);
    const { headers, text } = p.delivery(pr, sign);
    const res = await fetch(`${server.url}/api/deploy/${refreshToken}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { applicationId, appName, send };
}

/** One provider's pull request, opened, updated and closed; each assertion names the provider. */
async function pullRequestLife(t: Test, p: Provider, i: number) {
  const say = (what: string) => `${p.name}: ${what}`;
  const buildSecret = `bs-${randomBytes(12).toString('hex')}`;
  const { applicationId, appName, send } = await previewApp(t, p, 'pv', { previewBuildSecrets: `PREVIEW_TOKEN=${buildSecret}` });
  const branch = `feature-${p.name}`;
  const number = 20 + i;
  const previewName = `${appName}-pr-${number}`;
  const url = `http://${previewName}.${p.name}.test`;
  const deploys = async (deploymentId: string, sha: string) => {
    const done = await deploymentFinished(client, deploymentId);
    t.equal(done.state, 'done', say(done.errorMessage ?? 'deployed'));
    const log = (await client.get('deployment.readLogs', { deploymentId })).body;
    t.match(String(log), new RegExp(`Fetched ${sha.slice(0, 7)}`), say(`${sha.slice(0, 7)}, the head commit, cloned through the connection`));
  };
  const comment = (n: number) => {
    const all = p.comments(n);
    t.equal(all.length, 1, say(`one comment on pull request #${n}`));
    return all[0] ?? '';
  };

  let head = branches[branch]!;
  t.equal((await send({ step: 'open', branch, number, sha: head }, 'not-the-secret')).status, 401, say("a delivery not signed with the secret, by the provider's scheme, is refused"));
  const opened = await send({ step: 'open', branch, number, sha: head });
  t.equal(opened.status, 202, say(JSON.stringify(opened.body)));
  await deploys(opened.body.deploymentId, head);
  const [preview] = (await client.get('previewDeployment.all', { applicationId })).body as Record<string, any>[];
  t.match(preview, { appName: previewName, branch, pullRequestNumber: String(number), previewStatus: 'done', domain: { host: `${previewName}.${p.name}.test` } }, say('the preview'));
  t.not(preview!.pullRequestCommentId, '', say('the comment id is kept'));
  t.equal(await serviceStatus(previewName), 200, say('the service runs'));
  const image = ((await docker.getService(previewName).inspect()) as { Spec: { TaskTemplate: { ContainerSpec: { Image: string } } } }).Spec.TaskTemplate.ContainerSpec.Image.split('@')[0]!;
  const history = await run('docker', ['history', '--no-trunc', '--format', '{{.CreatedBy}}', image]);
  const inspected = await run('docker', ['image', 'inspect', image]);
  t.notOk(history.stdout.includes(buildSecret) || inspected.stdout.includes(buildSecret), say("previewBuildSecrets' value is in neither the image's history nor its config"));
  t.match(history.stdout, /sha256sum < \/run\/secrets\/PREVIEW_TOKEN/, say('the history has the step that read the secret'));
  const built = await run('docker', ['run', '--rm', image, 'cat', '/token.sha256']);
  t.equal(built.stdout.trim(), createHash('sha256').update(buildSecret).digest('hex'), say('the build read previewBuildSecrets as a secret mount (the image keeps its hash)'));
  const buildLog = String((await client.get('deployment.readLogs', { deploymentId: opened.body.deploymentId })).body);
  t.notOk(buildLog.includes(buildSecret), say('nor is it in the deployment log'));
  t.match(buildLog, /build secrets PREVIEW_TOKEN are mounted by id/, say('the log says how the secret was given'));
  let said = comment(number);
  t.match(said, /Status: \*\*done\*\*/, say('the comment: done'));
  t.match(said, url, say('with the URL'));
  t.match(said, head.slice(0, 12), say('and the commit'));
  t.equal(await served(`${previewName}.${p.name}.test`, `${p.name}: one\n`), `${p.name}: one\n`, say('the branch served through the proxy at its domain'));

  const previous = head;
  head = await push(branch);
  const updated = await send({ step: 'update', branch, number, sha: head, previous });
  t.equal(updated.status, 202, say(JSON.stringify(updated.body)));
  await deploys(updated.body.deploymentId, head);
  const again = (await client.get('previewDeployment.one', { previewDeploymentId: preview!.previewDeploymentId })).body;
  t.match(again, { appName: previewName, domainId: preview!.domainId, pullRequestCommentId: preview!.pullRequestCommentId, previewStatus: 'done' }, say('the same service, domain and comment'));
  said = comment(number);
  t.match(said, head.slice(0, 12), say('the comment updated to the new commit'));
  t.match(said, /Status: \*\*done\*\*/, say('done'));
  t.equal(await served(`${previewName}.${p.name}.test`, `${branch}: two\n`), `${branch}: two\n`, say('the new commit served at the same domain'));
  if (p.name === 'gitlab') {
    // The preview's domain edited through domain.update: routed at once, with no redeploy; then set back.
    const moved = `${previewName}.moved.test`;
    await ok(client.post('domain.update', { domainId: preview!.domainId, host: moved, port: 8080, https: false, certificateType: 'none', domainType: 'preview' }), 'domain.update');
    t.equal(await served(moved, `${branch}: two\n`), `${branch}: two\n`, say('served at once at the host domain.update gave it'));
    await ok(
      client.post('domain.update', { domainId: preview!.domainId, host: `${previewName}.${p.name}.test`, port: 8080, https: false, certificateType: 'none', domainType: 'preview' }),
      'domain.update back',
    );
    t.equal(await served(`${previewName}.${p.name}.test`, `${branch}: two\n`), `${branch}: two\n`, say('and at its own host again'));
    t.equal((await client.get('previewDeployment.one', { previewDeploymentId: preview!.previewDeploymentId })).body.deployments.length, 2, say('no deployment was made for it'));
  }

  const closed = await send({ step: 'close', branch, number, sha: head });
  t.match(closed, { status: 200, body: { reason: `preview removed: pull request #${number} closed` } }, say('closed'));
  t.equal(await serviceStatus(previewName), 404, say('the service is gone'));
  await waitFor(`${previewName} no longer served`, async () => (await through(proxyPort, `${previewName}.${p.name}.test`))?.body !== `${branch}: two\n`, { timeout: 30_000, interval: 200 });
  t.equal((await client.get('domain.one', { domainId: preview!.domainId })).status, 404, say('the domain is gone'));
  t.same((await client.get('previewDeployment.all', { applicationId })).body, [], say('the record is gone'));
  t.match(comment(number), /Status: \*\*removed\*\*/, say('the comment says it is gone'));
  const log = (await client.get('application.webhookDeliveries', { applicationId })).body;
  t.match(log, [{ statusCode: 200 }, { statusCode: 202 }, { statusCode: 202 }, { statusCode: 401 }], say('the delivery log'));

  if (p.name !== 'gitea') return;
  // previewLimit: the pull request is told once, when it opens (not on each push).
  await ok(client.post('application.update', { applicationId, previewLimit: 0 }), 'application.update');
  t.match(await send({ step: 'open', branch, number: 40, sha: head }), { status: 200, body: { reason: 'preview limit reached: 0 live previews (previewLimit 0)' } }, say('the limit'));
  t.match(await send({ step: 'update', branch, number: 40, sha: head, previous }), { status: 200, body: { reason: /preview limit reached/ } }, say('still the limit'));
  t.match(comment(40), /Status: \*\*not deployed\*\*[\s\S]*preview limit reached/, say('told once'));
}

t.test('each provider: opened deploys and comments, an update redeploys and updates the comment, closing removes (the four at once)', async t => {
  await Promise.all(providers.map((p, i) => pullRequestLife(t, p, i)));
});

/**
 * One provider's pull requests from the fork someone/app: refused while its author has no write
 * access to team/app (the delivery log says why); by an author with it, deployed from the fork's
 * branch, through the application's connection; with previewRequireCollaboratorPermissions off,
 * deployed whoever the author is.
 */
async function forkPullRequests(t: Test, p: Provider, i: number) {
  const say = (what: string) => `${p.name} fork: ${what}`;
  // The fork's Dockerfile is the base's: its required secret mount needs the build secret too.
  const { applicationId, appName, send } = await previewApp(t, p, 'fk', { previewBuildSecrets: `PREVIEW_TOKEN=fk-${randomBytes(8).toString('hex')}` });
  const branch = `feature-${p.name}`;
  const sha = forkBranches[branch]!;
  const page = `${p.name}: from the fork\n`;
  const deployed = async (number: number, fork: 'writer' | 'outsider') => {
    const opened = await send({ step: 'open', branch, number, sha, fork });
    t.equal(opened.status, 202, say(JSON.stringify(opened.body)));
    const done = await deploymentFinished(client, opened.body.deploymentId);
    t.equal(done.state, 'done', say(done.errorMessage ?? 'deployed'));
    const log = String((await client.get('deployment.readLogs', { deploymentId: opened.body.deploymentId })).body);
    t.match(log, new RegExp(`Fetched ${sha.slice(0, 7)}`), say("the fork's head commit cloned"));
    t.match(log, 'of the fork someone/app', say('from the fork'));
    const name = `${appName}-pr-${number}`;
    t.equal(await served(`${name}.${p.name}.test`, page), page, say("the fork's page served through the proxy"));
    t.match(await send({ step: 'close', branch, number, sha, fork }), { status: 200, body: { reason: `preview removed: pull request #${number} closed` } }, say('closed'));
    t.equal(await serviceStatus(name), 404, say('its service is gone'));
  };

  const number = 60 + i;
  const reason = 'pull request from a fork by drive-by, who has no write access to team/app: not deployed while previewRequireCollaboratorPermissions is on';
  t.match(await send({ step: 'open', branch, number, sha, fork: 'outsider' }), { status: 200, body: { reason } }, say('an author without write access: not deployed'));
  t.same((await client.get('previewDeployment.all', { applicationId })).body, [], say('no preview'));
  t.match((await client.get('application.webhookDeliveries', { applicationId })).body[0], { statusCode: 200, decision: reason }, say('the delivery log says why'));

  if (p.name === 'gitea') {
    // A provider that cannot answer (here its token is refused) counts as no: the reason says why.
    const expiry = gitea.tokens.get(gtToken.accessToken)!;
    gitea.tokens.set(gtToken.accessToken, Date.now() - 1000);
    const refused = await send({ step: 'open', branch, number, sha, fork: 'writer' }).finally(() => gitea.tokens.set(gtToken.accessToken, expiry));
    t.match(
      refused,
      { status: 200, body: { reason: new RegExp(`^pull request #${number} could not be read from gitea \\(Gitea refused the token: token is expired\\): not deployed$`) } },
      say('no answer from the provider: not deployed'),
    );
  }
  await deployed(number, 'writer');
  await ok(client.post('application.update', { applicationId, previewRequireCollaboratorPermissions: false }), 'application.update');
  await deployed(number + 10, 'outsider');
}

t.test("each provider: a fork's pull request, gated on its author's write access, deploys the fork's branch (the four at once)", async t => {
  await Promise.all(providers.map((p, i) => forkPullRequests(t, p, i)));
});
