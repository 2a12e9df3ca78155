// Issue 32: a git provider written outside the repository, as a third party writes one — two
// files (package.json + index.js) in a temporary directory, importing @berth/core from the running
// Berth — enabled by one config line (`providers.git.forge.resolve`), found by the kernel as
// `git.forge`, and passing the git providers' shared suite against a small forge API on loopback
// whose repositories git http-backend serves behind the account's token. The same two files make it
// a forge in full (issue 48): its connections (its form: settings and a sealed token) through the
// `forge.*` procedures Berth makes from that form, an application deploying from it
// (saveForgeProvider) and cloning through the connection, a push signed its way deploying, a
// pull request previewed with a comment on it, and a compose stack deploying from it (its source
// type and fields taken by compose.update, answered by compose.one) — no change anywhere else.
import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import t from 'tap';
import {
  commitFiles,
  deploymentFinished,
  deploymentIdOf,
  gitProviderConformance,
  makeGitRepo,
  otherOrganization,
  signUpAdmin,
  startGitHttpServer,
  startTestServer,
  freePort,
  TEST_BASE_IMAGE,
  TEST_CADDY_IMAGE,
  waitFor,
} from '@berth/core/testing';

const run = promisify(execFile);
const stackFile = (version: string) => `services:\n  app:\n    image: ${TEST_BASE_IMAGE}\n    init: true\n    stop_grace_period: 1s\n    command: ["sleep", "3600"]\n# ${version}\n`;
const outside = mkdtempSync(path.join(os.tmpdir(), 'berth-third-party-git-'));
t.teardown(() => rmSync(outside, { recursive: true, force: true }));

const forgeDir = path.join(outside, 'berth-provider-git-forge');
mkdirSync(forgeDir);
writeFileSync(
  path.join(forgeDir, 'package.json'),
  JSON.stringify({ name: 'berth-provider-git-forge', version: '1.0.0', type: 'module', main: 'index.js', peerDependencies: { '@berth/core': '*' } }, null, 2),
);
writeFileSync(
  path.join(forgeDir, 'index.js'),
  `
import { createHmac, timingSafeEqual } from 'node:crypto';
import { defineProvider, GitProviderError, Type } from '@berth/core';

const text = v => (typeof v === 'string' && v ? v : null);

class ForgeProvider {
  id = 'forge';
  label = 'Forge';
  // What a connection keeps: the API and git addresses in clear, the token sealed.
  connection = {
    settings: Type.Object({ apiUrl: Type.String({ minLength: 1 }), gitUrl: Type.String({ minLength: 1 }), installationId: Type.Optional(Type.String()) }),
    secrets: Type.Object({ token: Type.String({ minLength: 1 }), webhookSecret: Type.Optional(Type.String()) }),
    // Its app: one webhook for every repository of an installation, signed with the connection's webhook secret.
    app: { installation: 'installationId', secret: 'webhookSecret' },
  };
  // The workload fields that name what to clone from it.
  sourceFields = { id: 'forgeId', owner: 'forgeOwner', repository: 'forgeRepository', branch: 'forgeBranch', buildPath: 'forgeBuildPath' };
  // Its webhook deliveries: X-Forge-Event and X-Forge-Delivery, a push naming its branch, head
  // commit, message and files, signed with X-Forge-Signature (HMAC-SHA256 of the body, hex).
  deliveries = {
    eventHeader: 'x-forge-event',
    signatureHeader: 'X-Forge-Signature',
    // An app delivery names its installation and repository at the top of the body.
    app: {
      installationField: 'installation',
      origin: body => ({ installationId: text(body.installation), appId: null }),
      repository: body => text(body.repository),
    },
    read(headers, body) {
      const event = text(headers['x-forge-event']) ?? '';
      const deliveryId = text(headers['x-forge-delivery']);
      const push = event === 'push';
      // A pull request: X-Forge-Event "pull", its action, number, head and base, and its author.
      if (event === 'pull') {
        const obj = v => (v && typeof v === 'object' ? v : {});
        const [head, base, user] = [obj(body.head), obj(body.base), obj(body.user)];
        const pullRequest = {
          action: text(body.action) ?? '',
          id: String(body.id ?? ''),
          number: Number(body.number),
          url: text(body.url) ?? '',
          title: text(body.title) ?? '',
          headBranch: text(head.ref) ?? '',
          headSha: text(head.sha),
          baseBranch: text(base.ref) ?? '',
          repository: text(base.repo),
          fromFork: text(head.repo) !== text(base.repo),
          headRepository: text(head.repo),
          author: { id: user.id == null ? null : String(user.id), login: text(user.login) },
          labels: [],
        };
        return { event, deliveryId, kind: 'pullRequest', branch: pullRequest.headBranch, tag: null, deleted: false, commit: pullRequest.headSha, message: null, paths: null, pullRequest };
      }
      return {
        event,
        deliveryId,
        kind: push ? 'push' : event === 'hello' ? 'ping' : 'other',
        branch: push ? text(body.branch) : null,
        tag: null,
        deleted: push && body.deleted === true,
        commit: push ? text(body.sha) : null,
        message: push ? text(body.message) : null,
        paths: push && Array.isArray(body.files) ? body.files.filter(f => typeof f === 'string') : null,
      };
    },
    verify(headers, raw, secret) {
      const sent = text(headers['x-forge-signature']);
      if (!sent) return null;
      const a = Buffer.from(sent);
      const b = Buffer.from(createHmac('sha256', secret).update(raw).digest('hex'));
      return a.length === b.length && timingSafeEqual(a, b) ? { ok: true } : { ok: false, reason: 'bad signature: X-Forge-Signature is not the body signed with the secret' };
    },
  };
  async #call(account, step, method, path, body) {
    let res;
    try {
      res = await fetch(account.settings.apiUrl + path, { method, headers: { authorization: 'Bearer ' + account.secrets.token, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    } catch (e) {
      throw new GitProviderError('connect', 'Forge cannot be reached: ' + e.message);
    }
    if (res.status === 401) throw new GitProviderError('credentials', 'Forge refused the token');
    if (res.status === 404) throw new GitProviderError(step === 'commit' || step === 'pullRequest' ? 'missing' : step, 'Forge: not found');
    if (!res.ok) throw new GitProviderError(step, 'Forge answered ' + res.status);
    return res.status === 204 ? null : res.json();
  }
  async #all(account, step, path) {
    const out = [];
    for (let page = 1; page; ) {
      const answer = await this.#call(account, step, 'GET', path + '?page=' + page);
      out.push(...answer.items);
      page = answer.next;
    }
    return out;
  }
  async connect(account) { await this.#call(account, 'connect', 'GET', '/user'); return { settings: {}, secrets: {} }; }
  async refresh() { return null; }
  async listRepositories(account) {
    return (await this.#all(account, 'repositories', '/repos')).map(r => ({ id: String(r.id), owner: r.owner, name: r.name, cloneUrl: r.clone_url, defaultBranch: r.default_branch, private: r.private }));
  }
  async listBranches(account, repo) { return this.#all(account, 'branches', '/repos/' + repo.owner + '/' + repo.name + '/branches'); }
  async resolveCommit(account, repo, ref) { return (await this.#call(account, 'commit', 'GET', '/repos/' + repo.owner + '/' + repo.name + '/commits/' + encodeURIComponent(ref))).sha; }
  async cloneCredential(account) { return { baseUrl: account.settings.gitUrl, username: 'token', password: account.secrets.token, expiresAt: null }; }
  async registerWebhook(account, repo, hook) { return { id: String((await this.#call(account, 'webhook', 'POST', '/repos/' + repo.owner + '/' + repo.name + '/hooks', hook)).id) }; }
  async removeWebhook(account, repo, id) {
    await this.#call(account, 'webhook', 'DELETE', '/repos/' + repo.owner + '/' + repo.name + '/hooks/' + id).catch(e => { if (e.failure !== 'webhook') throw e; });
  }
  async hasWriteAccess(account, repo, author) {
    if (!author.login) throw new GitProviderError('access', 'Forge: the pull request names no author');
    const found = await this.#call(account, 'access', 'GET', '/repos/' + repo.owner + '/' + repo.name + '/collaborators/' + encodeURIComponent(author.login)).catch(e => { if (e.failure === 'access') return null; throw e; });
    return found?.permission === 'write' || found?.permission === 'admin';
  }
  async pullRequest(account, repo, number) {
    const pr = await this.#call(account, 'pullRequest', 'GET', '/repos/' + repo.owner + '/' + repo.name + '/pulls/' + number);
    return { number: pr.number, state: pr.state, headRepository: pr.head.repo, headBranch: pr.head.ref, headSha: pr.head.sha, baseBranch: pr.base.ref, author: { id: String(pr.user.id), login: pr.user.login } };
  }
  async commentOnPullRequest(account, repo, number, body) { return { id: String((await this.#call(account, 'comment', 'POST', '/repos/' + repo.owner + '/' + repo.name + '/pulls/' + number + '/comments', { body })).id) }; }
}

export default defineProvider({ contract: 'git', id: 'forge', options: Type.Object({}, { additionalProperties: false }), create: () => new ForgeProvider() });
`,
);

// The forge: repositories git serves behind the token, and a small JSON API that pages by 2.
const token = 'forge-token-0123456789';
const git = await startGitHttpServer(t, { credential: (_user, password) => password === token });
// Deployable: the base image, waiting until it is stopped.
const app = await makeGitRepo({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCMD ["sh", "-c", "trap \\"exit 0\\" TERM; sleep 3600 & wait"]\n` });
t.teardown(app.cleanup);
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'next']);
const next = await commitFiles(app.dir, { NEXT: '1\n' });
await run('git', ['-C', app.dir, 'checkout', '-q', '-b', 'hotfix']);
const hotfix = await commitFiles(app.dir, { FIX: '1\n' });
const cloneUrl = await git.addRepository('acme/app', app.dir);
const branches = [
  { name: 'main', commit: app.commit },
  { name: 'next', commit: next },
  { name: 'hotfix', commit: hotfix },
];
const repos = [
  ['acme', 'app'],
  ['acme', 'site'],
  ['bob', 'notes'],
].map(([owner, name], i) => ({ id: i + 1, owner, name, clone_url: owner === 'acme' && name === 'app' ? cloneUrl : `${git.url}${owner}/${name}.git`, default_branch: 'main', private: true }));
const hooks = new Map<string, { id: string; url: string }>();
const comments: string[] = [];
let hookIds = 1;
const paged = (u: URL, items: unknown[]) => {
  const page = Number(u.searchParams.get('page') ?? 1);
  return { items: items.slice((page - 1) * 2, page * 2), next: page * 2 < items.length ? page + 1 : null };
};
const api = http.createServer((req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  const send = (status: number, body?: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? undefined : JSON.stringify(body));
  let text = '';
  req.on('data', c => {
    text += c;
  });
  req.on('end', () => {
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { message: 'bad token' });
    const route = `${req.method} ${u.pathname}`;
    let m: RegExpExecArray | null;
    if (route === 'GET /user') return send(200, { login: 'deploy-bot' });
    if (route === 'GET /repos') return send(200, paged(u, repos));
    if (!u.pathname.startsWith('/repos/acme/app/')) return send(404, {});
    const rest = `${req.method} ${u.pathname.slice('/repos/acme/app'.length)}`;
    if (rest === 'GET /branches') return send(200, paged(u, branches));
    if ((m = /^GET \/commits\/(.+)$/.exec(rest))) {
      const hit = branches.find(b => b.name === decodeURIComponent(m![1]!));
      return hit ? send(200, { sha: hit.commit }) : send(404, {});
    }
    if (rest === 'POST /hooks') {
      const hook = { id: String(hookIds++), url: JSON.parse(text).url as string };
      hooks.set(hook.id, hook);
      return send(201, { id: Number(hook.id) });
    }
    if ((m = /^DELETE \/hooks\/(\d+)$/.exec(rest))) return hooks.delete(m[1]!) ? send(204) : send(404, {});
    if ((m = /^GET \/collaborators\/([^/]+)$/.exec(rest))) {
      const permission = ({ writer: 'write', reader: 'read' } as Record<string, string>)[decodeURIComponent(m[1]!)];
      return permission ? send(200, { permission }) : send(404, {});
    }
    if (rest === 'GET /pulls/3') return send(200, { number: 3, state: 'open', head: { repo: 'bob/notes', ref: 'next', sha: next }, base: { ref: 'main' }, user: { id: 11, login: 'writer' } });
    // A pull request from a branch of acme/app itself, by its writer: what the preview deploys.
    if (rest === 'GET /pulls/4') return send(200, { number: 4, state: 'open', head: { repo: 'acme/app', ref: 'next', sha: next }, base: { ref: 'main' }, user: { id: 11, login: 'writer' } });
    if (/^POST \/pulls\/\d+\/comments$/.test(rest)) {
      comments.push(JSON.parse(text).body as string);
      return send(201, { id: comments.length });
    }
    return send(404, {});
  });
});
await new Promise<void>(resolve => api.listen(0, '127.0.0.1', resolve));
t.teardown(
  () =>
    new Promise<void>(resolve => {
      api.closeAllConnections();
      api.close(() => resolve());
    }),
);
const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;

t.test('one config line enables it: the kernel registers git.forge beside the four built-in ones', async t => {
  const server = await startTestServer({ providers: { git: { forge: { resolve: forgeDir } } } });
  t.teardown(() => server.destroy());
  const { providers } = server.kernel.container.cradle;
  t.same(providers.ids('git'), ['bitbucket', 'gitea', 'github', 'gitlab', 'forge']);
  const forge = providers.get('git', 'forge');
  t.equal(forge.label, 'Forge');
  t.same(
    (await forge.listRepositories({ settings: { apiUrl }, secrets: { token } })).map(r => r.name),
    ['app', 'site', 'notes'],
    'the instance the kernel made talks to the forge, every page read',
  );

  // The same package, imported as the kernel did (its @berth/core is the running Berth's), through the shared suite.
  const { default: descriptor } = await import(pathToFileURL(path.join(forgeDir, 'index.js')).href);
  gitProviderConformance(t, descriptor, {
    account: { settings: { apiUrl, gitUrl: git.url }, secrets: { token } },
    refusedAccount: { settings: { apiUrl, gitUrl: git.url }, secrets: { token: 'forge-token-wrong' } },
    repositories: repos.map(r => `${r.owner}/${r.name}`),
    repository: { owner: 'acme', name: 'app' },
    branches,
    pullRequest: 3,
    pullRequestHeld: { number: 3, state: 'open', headRepository: 'bob/notes', headBranch: 'next', headSha: next, baseBranch: 'main', author: { id: '11', login: 'writer' } },
    writeAccess: { writer: { id: '11', login: 'writer' }, reader: { id: '12', login: 'reader' }, stranger: { id: '13', login: 'stranger' } },
    service: { webhooks: () => [...hooks.values()], comments: () => comments },
  });
});

t.test('its deliveries are read by its own reader: a push signed its way deploys the pushed commit, the rest say why', async t => {
  const server = await startTestServer({ providers: { git: { forge: { resolve: forgeDir } } }, deploySettleSeconds: 1, hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const { environmentId } = (await client.post('project.create', { name: 'Forge hooks' })).body.environment;
  const repo = await makeGitRepo({ 'docker-compose.yml': stackFile('v1') });
  t.teardown(repo.cleanup);
  const created = await client.post('compose.create', { name: 'forged', environmentId, appName: `forge-${Date.now().toString(36)}` });
  const { composeId, refreshToken } = created.body;
  t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
  const secret = randomBytes(20).toString('hex');
  t.equal((await client.post('compose.update', { composeId, sourceType: 'git', customGitUrl: repo.dir, customGitBranch: 'main', webhookSecret: secret })).status, 200);
  const message = 'forge push';
  const sha = await commitFiles(repo.dir, { 'docker-compose.yml': stackFile('v2') }, message);

  const send = async (body: Record<string, unknown>, headers: Record<string, string>) => {
    const text = JSON.stringify(body);
    const res = await fetch(`${server.url}/api/deploy/compose/${refreshToken}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const signed = (body: Record<string, unknown>, id: string, event = 'push') => ({
    'x-forge-event': event,
    'x-forge-delivery': id,
    'x-forge-signature': createHmac('sha256', secret).update(JSON.stringify(body)).digest('hex'),
  });
  const push = { branch: 'main', sha, message, files: ['docker-compose.yml'] };

  const unsigned = await send(push, { 'x-forge-event': 'push', 'x-forge-delivery': 'f-0' });
  t.equal(unsigned.status, 401);
  t.match(unsigned.body.reason, 'missing signature: the workload has a webhook secret and the delivery carries no X-Forge-Signature', "the forge's own header is named");
  const forged = await send(push, { ...signed(push, 'f-1'), 'x-forge-signature': createHmac('sha256', 'not-the-secret').update(JSON.stringify(push)).digest('hex') });
  t.equal(forged.status, 401);
  t.match(forged.body.reason, 'bad signature: X-Forge-Signature is not the body signed with the secret', "the forge's own check refused it");
  const hello = await send({}, signed({}, 'f-2', 'hello'));
  t.match(hello, { status: 200, body: { reason: 'ping received: the hook is active' } }, "the forge's ping");
  const other = { ...push, branch: 'feature' };
  t.match(await send(other, signed(other, 'f-3')), { status: 200, body: { reason: 'branch not watched: feature was pushed, the workload deploys main' } }, 'its branch is the one compared');

  const ok = await send(push, signed(push, 'f-4'));
  t.equal(ok.status, 202, JSON.stringify(ok.body));
  const done = await deploymentFinished(client, ok.body.deploymentId);
  t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
  t.match(done, { title: message, description: `Hash: ${sha}` }, 'the deployment carries the commit and its message the forge sent');
  const entries = (await client.get('compose.webhookDeliveries', { composeId })).body as Record<string, any>[];
  t.match(entries[0], { provider: 'forge', event: 'push', deliveryId: 'f-4', signatureOk: true, statusCode: 202, ref: 'refs/heads/main', commit: sha }, 'the delivery log names the forge');
  t.match(entries.at(-1), { provider: 'forge', deliveryId: 'f-0', signatureOk: false, statusCode: 401 });
});

t.test('a forge in full from the same two files: its connections, an application cloning through one, a push, a preview and its comment', async t => {
  // A preview is routed: the proxy (Caddy) runs as a service of its own for this file.
  const proxy = `berth-test-proxy-${randomBytes(3).toString('hex')}`;
  const server = await startTestServer({
    providers: { git: { forge: { resolve: forgeDir } }, proxy: { caddy: { options: { serviceName: proxy } } } },
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: await freePort(),
    proxyHttpsPort: await freePort(),
    deploySettleSeconds: 1,
    publicUrl: 'https://berth.example.com',
  });
  t.teardown(async () => {
    await new Docker()
      .getService(proxy)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client, userId } = await signUpAdmin(server);
  const ok = async (r: Promise<{ status: number; body: any }>, what: string) => {
    const reply = await r;
    if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };

  // Its connections, through the procedures Berth made from its form.
  const refused = await client.post('forge.create', { name: 'Wrong', apiUrl, gitUrl: git.url, token: 'forge-token-wrong' });
  t.match(refused, { status: 400, body: { message: /^credentials: Forge refused the token/ } }, 'checked against the service (its connect) before anything is stored');
  const noToken = await client.post('forge.create', { name: 'No token', apiUrl, gitUrl: git.url });
  t.equal(noToken.status, 400);
  t.match(JSON.stringify(noToken.body.issues), /token/, 'the form is the input: a missing secret is named');
  const appSecret = randomBytes(16).toString('hex');
  const made = await ok(client.post('forge.create', { name: 'Forge', apiUrl, gitUrl: git.url, token, installationId: 'inst-7', webhookSecret: appSecret }), 'forge.create');
  t.match(made, { forgeId: /^[\w-]{16,32}$/, apiUrl, gitUrl: git.url, gitProvider: { name: 'Forge', providerType: 'forge' } });
  t.notOk('token' in made || 'webhookSecret' in made, 'the secrets are never answered');
  const { forgeId } = made;
  const [stored] = await server.kernel.container.cradle.orm.em.fork().getConnection().execute(`select secrets->>'token' as token from git_connections where connection_id = ?`, [forgeId]);
  t.ok(String(stored?.token).startsWith('v1:') && !String(stored?.token).includes(token), 'the token is stored sealed');
  t.same(await ok(client.get('forge.one', { forgeId }), 'forge.one'), made, 'one answers what create did');
  t.same(
    (await ok(client.get('forge.forgeProviders', {}), 'forgeProviders')).map((c: any) => c.forgeId),
    [forgeId],
  );
  t.same(
    (await ok(client.get('gitProvider.getAll', {}), 'getAll')).map((c: any) => c.providerType),
    ['forge'],
    'among the organization’s connections',
  );
  t.same(
    (await ok(client.get('forge.getForgeRepositories', { forgeId }), 'repositories')).map((r: any) => `${r.owner}/${r.name}`),
    ['acme/app', 'acme/site', 'bob/notes'],
    'its repositories through the connection, every page',
  );
  t.same(await ok(client.get('forge.getForgeBranches', { forgeId, owner: 'acme', repo: 'app' }), 'branches'), branches);
  t.equal(await ok(client.post('forge.testConnection', { forgeId }), 'testConnection'), 'Found 3 repositories', 'the API and a clone with its credential');
  t.match(await ok(client.post('forge.update', { forgeId, name: 'Forge (team)' }), 'update'), { forgeId, gitProvider: { name: 'Forge (team)' } });

  // Another organization sees none of it.
  const other = await otherOrganization(server, userId);
  t.equal((await other.client.get('forge.one', { forgeId })).status, 404, "another organization's connection is not found");
  t.same((await other.client.get('forge.forgeProviders', {})).body, []);

  // An application deploying from it: the clone goes through the connection (the git server wants the token).
  const { environmentId } = (await client.post('project.create', { name: 'Forge' })).body.environment;
  const created = await ok(client.post('application.create', { name: 'forged', environmentId, appName: `forged-${Date.now().toString(36)}` }), 'application.create');
  const { applicationId, refreshToken } = created;
  t.teardown(() => client.post('application.delete', { applicationId }));
  const wrongId = await client.post('application.saveForgeProvider', { applicationId, forgeId: 'x'.repeat(32), forgeOwner: 'acme', forgeRepository: 'app', forgeBranch: 'main' });
  t.equal(wrongId.status, 404, 'a connection that is not the organization’s is refused');
  t.equal(
    (await other.client.post('application.saveForgeProvider', { applicationId, forgeId, forgeOwner: 'acme', forgeRepository: 'app', forgeBranch: 'main' })).status,
    404,
    'nor may another organization link this application',
  );
  await ok(client.post('application.saveForgeProvider', { applicationId, forgeId, forgeOwner: 'acme', forgeRepository: 'app', forgeBranch: 'main' }), 'saveForgeProvider');
  const secret = randomBytes(20).toString('hex');
  await ok(
    client.post('application.update', { applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile', webhookSecret: secret, isPreviewDeploymentsActive: true, previewWildcard: '*.preview.test' }),
    'application.update',
  );
  t.match(await ok(client.get('application.one', { applicationId }), 'one'), { sourceType: 'forge' });
  t.match(
    await ok(client.get('application.one', { applicationId }), 'one'),
    { forgeId, forgeOwner: 'acme', forgeRepository: 'app', forgeBranch: 'main', forgeBuildPath: null },
    "one answers the forge's own source fields (null when unset)",
  );
  const inUse = await client.post('gitProvider.remove', { gitProviderId: made.gitProvider.gitProviderId });
  t.match(inUse, { status: 409, body: { message: /in use by application/ } }, 'a connection an application deploys from is not removed');

  const send = async (body: Record<string, unknown>, event: string, id: string) => {
    const text = JSON.stringify(body);
    const headers = { 'content-type': 'application/json', 'x-forge-event': event, 'x-forge-delivery': id, 'x-forge-signature': createHmac('sha256', secret).update(text).digest('hex') };
    const res = await fetch(`${server.url}/api/deploy/${refreshToken}`, { method: 'POST', headers, body: text });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const pushed = await send({ branch: 'main', sha: app.commit, message: 'forge push', files: ['Dockerfile'] }, 'push', 'a-1');
  t.equal(pushed.status, 202, JSON.stringify(pushed.body));
  if (pushed.status !== 202) return;
  const done = await deploymentFinished(client, pushed.body.deploymentId);
  t.equal(done.status, 'done', done.errorMessage ?? 'deployed from the forge');
  t.match(done, { title: 'forge push', description: `Hash: ${app.commit}` });
  const log = String((await client.get('deployment.readLogs', { deploymentId: pushed.body.deploymentId })).body);
  t.match(log, 'Minting a Forge clone credential for acme/app', 'cloned through the connection');
  t.notMatch(log, token, 'the token is not in the log');

  // A pull request: previewed from its head (read through the forge's API), and told so in a comment.
  const before = comments.length;
  const opened = await send(
    {
      action: 'opened',
      id: 'pr-4',
      number: 4,
      url: 'http://forge.test/acme/app/pulls/4',
      title: 'Next',
      head: { ref: 'next', sha: next, repo: 'acme/app' },
      base: { ref: 'main', repo: 'acme/app' },
      user: { id: 11, login: 'writer' },
    },
    'pull',
    'a-2',
  );
  t.equal(opened.status, 202, JSON.stringify(opened.body));
  if (opened.status !== 202) return;
  const preview = await deploymentFinished(client, opened.body.deploymentId);
  t.equal(preview.status, 'done', preview.errorMessage ?? 'the preview deployed');
  t.match(preview, { isPreviewDeployment: true });
  const previews = (await ok(client.get('previewDeployment.all', { applicationId }), 'previews')) as Record<string, any>[];
  t.match(previews, [{ pullRequestNumber: '4', branch: 'next', pullRequestTitle: 'Next' }], 'one preview, of pull request 4');
  await waitFor('the comment on the pull request', async () => (comments.length > before ? true : undefined), { timeout: 30_000, interval: 100 });
  t.match(comments.at(-1), /preview/i, 'the forge got a comment on the pull request');
  await ok(client.post('previewDeployment.delete', { previewDeploymentId: previews[0]!.previewDeploymentId }), 'previewDeployment.delete');

  // Its app's deliveries, at /api/deploy/forge: signed with the app's webhook secret of a connection of the installation they name.
  const toApp = async (body: Record<string, unknown>, secretUsed: string) => {
    const text = JSON.stringify(body);
    const headers = {
      'content-type': 'application/json',
      'x-forge-event': 'push',
      'x-forge-delivery': randomBytes(4).toString('hex'),
      'x-forge-signature': createHmac('sha256', secretUsed).update(text).digest('hex'),
    };
    const res = await fetch(`${server.url}/api/deploy/forge`, { method: 'POST', headers, body: text });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const appPush = { installation: 'inst-7', repository: 'acme/app', branch: 'main', sha: app.commit, message: 'through the app', files: ['Dockerfile'] };
  t.match(
    await toApp({ ...appPush, installation: 'inst-8' }, appSecret),
    { status: 401, body: { reason: 'unknown installation: no Forge App connection has installation inst-8' } },
    'an installation no connection has',
  );
  t.match(
    await toApp(appPush, 'not-the-secret'),
    { status: 401, body: { reason: 'bad signature: X-Forge-Signature does not match the body signed with the webhook secret of the Forge App connections of this installation' } },
    "checked by the forge's own scheme",
  );
  t.match(await toApp({ ...appPush, repository: 'acme/site' }, appSecret), { status: 200, body: { reason: 'no application or compose stack deploys acme/site through this Forge App' } });
  const viaApp = await toApp(appPush, appSecret);
  t.equal(viaApp.status, 202, JSON.stringify(viaApp.body));
  t.match(viaApp.body.workloads, [{ kind: 'application', id: applicationId, statusCode: 202 }], 'the application deploying acme/app through the connection');
  if (viaApp.status === 202) t.equal((await deploymentFinished(client, viaApp.body.deploymentId)).status, 'done', 'deployed through the app');
});

t.test("a compose stack deploys from it through its organization's connection; another organization's stack cannot use that connection", async t => {
  const server = await startTestServer({ providers: { git: { forge: { resolve: forgeDir } } }, deploySettleSeconds: 1 });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const ok = async (r: Promise<{ status: number; body: any }>, what: string) => {
    const reply = await r;
    if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  // The stack's repository, served behind the token like acme/app.
  const repo = await makeGitRepo({ 'docker-compose.yml': stackFile('forge') });
  t.teardown(repo.cleanup);
  await git.addRepository('acme/stack', repo.dir);
  const { forgeId } = await ok(client.post('forge.create', { name: 'Forge', apiUrl, gitUrl: git.url, token }), 'forge.create');
  const source = { sourceType: 'forge', forgeId, forgeOwner: 'acme', forgeRepository: 'stack', forgeBranch: 'main' };

  // The document: compose.update takes the forge's source type and fields; both kinds' one answer them.
  const doc = (await client.get('settings.getOpenApiDocument')).body;
  const update = doc.paths['/compose.update'].post.requestBody.content['application/json'].schema.properties;
  t.ok(JSON.stringify(update.sourceType).includes('"forge"'), 'compose.update takes sourceType forge');
  t.ok(
    ['forgeId', 'forgeOwner', 'forgeRepository', 'forgeBranch', 'forgeBuildPath'].every(k => k in update),
    "compose.update takes the forge's source fields",
  );
  for (const op of ['/compose.one', '/application.one']) {
    const answer = doc.paths[op].get.responses['200'].content['application/json'].schema.properties;
    t.ok(
      ['forgeId', 'forgeOwner', 'forgeRepository', 'forgeBranch', 'forgeBuildPath'].every(k => k in answer),
      `${op} declares the forge's source fields`,
    );
  }

  // Another organization: its own stack, the owner's connection named — refused by the connection check.
  const other = await otherOrganization(server, userId);
  const { environmentId: otherEnvironmentId } = (await other.client.post('project.create', { name: 'Other' })).body.environment;
  const theirs = await ok(other.client.post('compose.create', { name: 'theirs', environmentId: otherEnvironmentId, appName: `theirs-${Date.now().toString(36)}` }), 'compose.create');
  t.teardown(() => other.client.post('compose.delete', { composeId: theirs.composeId, deleteVolumes: true }));
  const refused = await other.client.post('compose.update', { composeId: theirs.composeId, autoDeploy: false, ...source });
  t.ok([403, 404].includes(refused.status), `another organization's stack cannot use the connection (${refused.status} ${JSON.stringify(refused.body)})`);
  t.match(await ok(other.client.get('compose.one', { composeId: theirs.composeId }), 'compose.one'), { forgeId: null, sourceType: 'github' }, 'nothing of it was kept');

  // The owner's stack, the same fields: kept, answered, deployed from the forge's repository through the connection.
  const { environmentId } = (await client.post('project.create', { name: 'Forge stacks' })).body.environment;
  const stack = await ok(client.post('compose.create', { name: 'forged', environmentId, appName: `forged-stack-${Date.now().toString(36)}` }), 'compose.create');
  t.teardown(() => client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
  const saved = await client.post('compose.update', { composeId: stack.composeId, composePath: './docker-compose.yml', autoDeploy: false, ...source });
  t.equal(saved.status, 200, JSON.stringify(saved.body));
  t.match(saved.body, { ...source, forgeBuildPath: null }, 'update answers the forge fields it kept');
  const one = await ok(client.get('compose.one', { composeId: stack.composeId }), 'compose.one');
  t.match(one, { ...source, forgeBuildPath: null }, "one answers the forge's source fields (null when unset)");
  t.ok(one.forge, 'and the connection it deploys from');
  const done = await deploymentFinished(client, deploymentIdOf(await client.post('compose.deploy', { composeId: stack.composeId })));
  t.equal(done.status, 'done', done.errorMessage ?? 'deployed from the forge');
  const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
  t.match(log, 'Minting a Forge clone credential for acme/stack', 'cloned through the connection');
  t.match(log, `Fetched ${repo.commit}`, "the repository's commit");
  t.notMatch(log, token, 'the token is not in the log');
  t.same(await ok(client.get('compose.loadServices', { composeId: stack.composeId }), 'loadServices'), ['app'], "the services of the repository's file");

  // Forgetting the source forgets the forge's fields too.
  await ok(client.post('compose.disconnectGitProvider', { composeId: stack.composeId }), 'disconnectGitProvider');
  t.match(await ok(client.get('compose.one', { composeId: stack.composeId }), 'compose.one'), { forgeId: null, forgeOwner: null, forgeRepository: null, forgeBranch: null });
});
