// Issue 32: a git provider written outside the repository, as a third party writes one — two
// files (package.json + index.js) in a temporary directory, importing @berth/core from the running
// Berth — enabled by one config line (`providers.git.forge.resolve`), found by the kernel as
// `git.forge`, and passing the git providers' shared suite against a small forge API on loopback
// whose repositories git http-backend serves behind the account's token.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { commitFiles, gitProviderConformance, makeGitRepo, startGitHttpServer, startTestServer } from '@berth/core/testing';

const run = promisify(execFile);
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
import { defineProvider, GitProviderError, Type } from '@berth/core';

class ForgeProvider {
  id = 'forge';
  label = 'Forge';
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
const app = await makeGitRepo({ Dockerfile: 'FROM scratch\n' });
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
