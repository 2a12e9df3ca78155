// GitHub on loopback, as a GitHub Enterprise server: the REST endpoints Berth calls under
// /api/v3, answering with the examples of GitHub's own API description (@octokit/openapi,
// api.github.com.json: the example each operation's 2xx response refers to, with ids, names and
// URLs set to this server's: repositories, branches, commits, webhooks, pull request comments,
// a collaborator's permission, a pull request), and everything else (the git smart-HTTP paths) passed on to a
// `git http-backend` server that accepts only the installation tokens this API minted.
// The App's JWT is verified with the public half of the test key (RS256, iss = the App id,
// not expired); installation tokens expire in an hour and are checked on every request.
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { Test } from 'tap';
import { startGitHttpServer, type GitHttpServer } from '@berth/core/testing';

type Json = any;
const spec = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as Json;

/** The example GitHub's description gives for an operation's response, $ref resolved, as a fresh copy. */
export function example(path: string, method: string, status: string): Json {
  const content = spec.paths[path][method].responses[status].content['application/json'];
  const first = Object.values(content.examples as Record<string, { $ref?: string; value?: Json }>)[0]!;
  const value = first.$ref ? spec.components.examples[first.$ref.split('/').pop()!].value : first.value;
  return structuredClone(value);
}

/** The webhook secret the manifest flow's conversion gives every App it creates (what GitHub App deliveries are signed with). */
export const MANIFEST_WEBHOOK_SECRET = 'manifest-webhook-secret';

/** GitHub's page size is per_page up to 100; this server caps it lower so that a few items make several pages. */
const PAGE_CAP = 2;

export interface FakeRepository {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  defaultBranch: string;
  /** Branch name → commit; for repositories git serves, read from the repository itself. */
  branches: Record<string, string>;
}

/** A pull request as the service holds it: its head (repository owner/name, branch, commit), base branch, author and state. */
export interface FakePullRequest {
  head: string;
  branch: string;
  sha: string;
  base: string;
  author: { id: number; login: string };
  state: 'open' | 'closed';
}

export interface FakeGithub {
  /** The web URL (githubUrl): the API is below /api/v3. */
  url: string;
  appId: string;
  installationId: number;
  repositories: FakeRepository[];
  /** Installation tokens minted so far, in order. */
  minted: string[];
  /** Every JWT the server accepted / refused. */
  jwts: { accepted: number; refused: number };
  webhooks: Map<string, { id: string; url: string; secret: string; events: string[] }[]>;
  comments: Map<string, string[]>;
  /** owner/name → user login → the permission "Get repository permissions for a user" answers (admin, write, read, none); an unknown login is 404. */
  permissions: Map<string, Map<string, string>>;
  /** owner/name#number → the pull request "Get a pull request" answers; none is 404. */
  pullRequests: Map<string, FakePullRequest>;
  git: GitHttpServer;
  /** A one-time code the manifest flow hands Berth (converted once, then refused). */
  manifestCode(): string;
  /** Adds a repository served for real by git (its branches read from it). */
  addGitRepository(owner: string, name: string, dir: string, branches: Record<string, string>): Promise<void>;
}

function jwtPayload(authorization: string | undefined, publicKey: KeyObject): Json | null {
  const m = /^bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(authorization ?? '');
  if (!m) return null;
  const header = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
  if (header.alg !== 'RS256') return null;
  if (!verify('RSA-SHA256', Buffer.from(`${m[1]}.${m[2]}`), publicKey, Buffer.from(m[3]!, 'base64url'))) return null;
  return JSON.parse(Buffer.from(m[2]!, 'base64url').toString('utf8'));
}

export async function startFakeGithub(t: Test, o: { publicKeyPem: string; privateKeyPem: string; appId: string; installationId: number }): Promise<FakeGithub> {
  const manifestCodes = new Set<string>();
  const publicKey = createPublicKey(o.publicKeyPem);
  const tokens = new Map<string, number>(); // token → expiry (ms)
  const git = await startGitHttpServer(t, { credential: (user, password) => user === 'x-access-token' && (tokens.get(password) ?? 0) > Date.now() });
  let nextHookId = 100;
  let nextCommentId = 500;
  /** Where each comment's body is: its pull request's list and its place in it. */
  const commentAt = new Map<number, { key: string; index: number }>();
  let url = '';
  const gh: FakeGithub = {
    url: '',
    appId: o.appId,
    installationId: o.installationId,
    repositories: [],
    minted: [],
    jwts: { accepted: 0, refused: 0 },
    webhooks: new Map(),
    comments: new Map(),
    permissions: new Map(),
    pullRequests: new Map(),
    git,
    manifestCode() {
      const code = randomBytes(10).toString('hex');
      manifestCodes.add(code);
      return code;
    },
    async addGitRepository(owner, name, dir, branches) {
      await git.addRepository(`${owner}/${name}`, dir);
      gh.repositories.push({ id: 1000 + gh.repositories.length, owner, name, private: true, defaultBranch: 'main', branches });
    },
  };

  const send = (res: http.ServerResponse, status: number, body: Json, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(body === undefined ? undefined : JSON.stringify(body));
  };
  const refuse = (res: http.ServerResponse) => send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
  const notFound = (res: http.ServerResponse) => send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });

  /** One page of items, with GitHub's Link header when more follow. */
  const page = (req: URL, items: Json[]) => {
    const perPage = Math.min(Number(req.searchParams.get('per_page') ?? 30), 100, PAGE_CAP);
    const n = Math.max(1, Number(req.searchParams.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number) => {
      const u = new URL(req);
      u.searchParams.set('per_page', String(perPage));
      u.searchParams.set('page', String(p));
      return u.toString();
    };
    const links = [...(n < last ? [`<${link(n + 1)}>; rel="next"`, `<${link(last)}>; rel="last"`] : []), ...(n > 1 ? [`<${link(1)}>; rel="first"`, `<${link(n - 1)}>; rel="prev"`] : [])];
    return { items: items.slice((n - 1) * perPage, n * perPage), headers: (links.length ? { link: links.join(', ') } : {}) as Record<string, string> };
  };

  const repoJson = (r: FakeRepository, template: Json) => ({
    ...template,
    id: r.id,
    name: r.name,
    full_name: `${r.owner}/${r.name}`,
    private: r.private,
    default_branch: r.defaultBranch,
    owner: { ...template.owner, login: r.owner },
    html_url: `${url}/${r.owner}/${r.name}`,
    clone_url: `${url}/${r.owner}/${r.name}.git`,
    url: `${url}/api/v3/repos/${r.owner}/${r.name}`,
  });

  const api = async (req: http.IncomingMessage, res: http.ServerResponse, u: URL, body: Json) => {
    const route = `${req.method} ${u.pathname.slice('/api/v3'.length)}`;
    let m: RegExpExecArray | null;
    // The manifest flow's conversion: no credential, the one-time code alone.
    if ((m = /^POST \/app-manifests\/([^/]+)\/conversions$/.exec(route))) {
      if (!manifestCodes.delete(decodeURIComponent(m[1]!))) return notFound(res);
      const template = example('/app-manifests/{code}/conversions', 'post', '201');
      return send(res, 201, {
        ...template,
        id: Number(o.appId),
        slug: 'berth-test-app',
        name: 'Berth test app',
        html_url: `${url}/apps/berth-test-app`,
        pem: o.privateKeyPem,
        webhook_secret: MANIFEST_WEBHOOK_SECRET,
        client_secret: 'manifest-client-secret',
      });
    }
    // The App's own endpoints: its JWT.
    if (route === 'GET /app' || (m = /^POST \/app\/installations\/(\d+)\/access_tokens$/.exec(route))) {
      const claims = jwtPayload(req.headers.authorization, publicKey);
      if (!claims || String(claims.iss) !== o.appId || claims.exp * 1000 < Date.now()) {
        gh.jwts.refused++;
        return refuse(res);
      }
      gh.jwts.accepted++;
      if (route === 'GET /app') return send(res, 200, { ...example('/app', 'get', '200'), id: Number(o.appId), slug: 'berth-test-app' });
      if (Number(m![1]) !== o.installationId) return notFound(res);
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      const expires = Date.now() + 3600_000;
      tokens.set(token, expires);
      gh.minted.push(token);
      return send(res, 201, { ...example('/app/installations/{installation_id}/access_tokens', 'post', '201'), token, expires_at: new Date(expires).toISOString().replace(/\.\d+Z$/, 'Z') });
    }
    // Everything else: an installation token.
    const token = /^token (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token || (tokens.get(token) ?? 0) < Date.now()) return refuse(res);
    if (route === 'GET /installation/repositories') {
      const template = example('/installation/repositories', 'get', '200');
      const { items, headers } = page(
        u,
        gh.repositories.map(r => repoJson(r, template.repositories[0])),
      );
      return send(res, 200, { ...template, total_count: gh.repositories.length, repositories: items }, headers);
    }
    const repoRoute = /^(\w+) \/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(route);
    const repo = repoRoute && gh.repositories.find(r => r.owner === repoRoute[2] && r.name === repoRoute[3]);
    if (!repoRoute || !repo) return notFound(res);
    const key = `${repo.owner}/${repo.name}`;
    const rest = `${repoRoute[1]} ${repoRoute[4] ?? ''}`;
    if (rest === 'GET /branches') {
      const template = example('/repos/{owner}/{repo}/branches', 'get', '200')[0];
      const all = Object.entries(repo.branches).map(([name, sha]) => ({ ...template, name, commit: { sha, url: `${url}/api/v3/repos/${key}/commits/${sha}` } }));
      const { items, headers } = page(u, all);
      return send(res, 200, items, headers);
    }
    if ((m = /^GET \/commits\/(.+)$/.exec(rest))) {
      const ref = decodeURIComponent(m[1]!);
      const sha = repo.branches[ref] ?? Object.values(repo.branches).find(s => s === ref);
      if (!sha) return send(res, 422, { message: `No commit found for SHA: ${ref}`, documentation_url: 'https://docs.github.com/rest/commits/commits#get-a-commit', status: '422' });
      if (!/application\/vnd\.github(\.v3)?\.sha/.test(String(req.headers.accept))) return send(res, 415, { message: 'this server answers the sha media type only' });
      res.writeHead(200, { 'content-type': 'application/vnd.github.sha; charset=utf-8' }).end(sha);
      return;
    }
    if (rest === 'POST /hooks') {
      const hook = { id: String(nextHookId++), url: body.config.url, secret: body.config.secret, events: body.events };
      gh.webhooks.set(key, [...(gh.webhooks.get(key) ?? []), hook]);
      const template = example('/repos/{owner}/{repo}/hooks', 'post', '201');
      return send(res, 201, { ...template, id: Number(hook.id), events: hook.events, active: body.active, config: { ...template.config, url: hook.url, content_type: body.config.content_type } });
    }
    if ((m = /^DELETE \/hooks\/(\d+)$/.exec(rest))) {
      const hooks = gh.webhooks.get(key) ?? [];
      if (!hooks.some(h => h.id === m![1])) return notFound(res);
      gh.webhooks.set(
        key,
        hooks.filter(h => h.id !== m![1]),
      );
      res.writeHead(204).end();
      return;
    }
    // "Get repository permissions for a user": the collaborator's permission (maintain reads write, triage read).
    if ((m = /^GET \/collaborators\/([^/]+)\/permission$/.exec(rest))) {
      const login = decodeURIComponent(m[1]!);
      const permission = gh.permissions.get(key)?.get(login);
      if (!permission) return notFound(res);
      const template = example('/repos/{owner}/{repo}/collaborators/{username}/permission', 'get', '200');
      return send(res, 200, { ...template, permission, role_name: permission, user: { ...template.user, login } });
    }
    // "Get a pull request": its head and base, state and author.
    if ((m = /^GET \/pulls\/(\d+)$/.exec(rest))) {
      const pr = gh.pullRequests.get(`${key}#${m[1]}`);
      if (!pr) return notFound(res);
      const template = example('/repos/{owner}/{repo}/pulls/{pull_number}', 'get', '200');
      const [headOwner, headName] = pr.head.split('/');
      const headRepo = gh.repositories.find(r => r.owner === headOwner && r.name === headName);
      const side = (t: Json, owner: string, ref: string, sha: string, r: FakeRepository | undefined) => ({
        ...t,
        label: `${owner}:${ref}`,
        ref,
        sha,
        user: { ...t.user, login: owner },
        repo: r ? repoJson(r, t.repo) : null,
      });
      return send(res, 200, {
        ...template,
        number: Number(m[1]),
        state: pr.state,
        html_url: `${url}/${key}/pull/${m[1]}`,
        user: { ...template.user, id: pr.author.id, login: pr.author.login },
        head: side(template.head, headOwner!, pr.branch, pr.sha, headRepo),
        base: side(template.base, repo.owner, pr.base, repo.branches[pr.base] ?? pr.sha, repo),
      });
    }
    if ((m = /^POST \/issues\/(\d+)\/comments$/.exec(rest))) {
      const comments = `${key}#${m[1]}`;
      gh.comments.set(comments, [...(gh.comments.get(comments) ?? []), body.body]);
      commentAt.set(nextCommentId, { key: comments, index: gh.comments.get(comments)!.length - 1 });
      return send(res, 201, { ...example('/repos/{owner}/{repo}/issues/{issue_number}/comments', 'post', '201'), id: nextCommentId++, body: body.body });
    }
    if ((m = /^PATCH \/issues\/comments\/(\d+)$/.exec(rest))) {
      const at = commentAt.get(Number(m[1]));
      if (!at?.key.startsWith(`${key}#`)) return notFound(res);
      gh.comments.get(at.key)![at.index] = body.body;
      return send(res, 200, { ...example('/repos/{owner}/{repo}/issues/comments/{comment_id}', 'patch', '200'), id: Number(m[1]), body: body.body });
    }
    return notFound(res);
  };

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', url);
    if (!u.pathname.startsWith('/api/v3/')) {
      // git's smart HTTP: passed on whole, headers included, to the git server.
      const upstream = http.request(new URL(req.url ?? '/', git.url), { method: req.method, headers: req.headers }, answer => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      api(req, res, u, text ? JSON.parse(text) : null).catch(e => send(res, 500, { message: String(e) }));
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gh.url = url;
  t.teardown(
    () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return gh;
}
