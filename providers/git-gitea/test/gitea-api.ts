// Gitea on loopback: the REST endpoints Berth calls under /api/v1 and the OAuth token endpoint
// /login/oauth/access_token, answering with the payloads of Gitea's API documentation
// (docs.gitea.com/api: "Get the authenticated user", "List the repos that the authenticated user
// owns", "List a repository's branches", "Get a single commit from a repository", "Create a hook",
// "Delete a hook", "Get repository permissions for a user", "Get a pull request", "Add a comment to an issue", the
// APIError { message, url }; docs.gitea.com "OAuth2 provider": the access_token answer and its errors), trimmed to the fields shown there and
// set to this server's names. Listings page by two with Gitea's Link and X-Total-Count headers.
// Access tokens expire (401 once they do); a refresh token is good once. Everything else (git's
// smart HTTP) goes to a `git http-backend` that accepts only user "oauth2" with a live token.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { oauthStandIn, startGitHttpServer, type GitHttpServer } from '@berth/core/testing';

type Json = any;
const PAGE_CAP = 2;

export interface FakeGiteaRepo {
  id: number;
  owner: string;
  name: string;
  isPrivate: boolean;
  branches: Record<string, string>;
}

/** A pull request as Gitea holds it: its head (repository owner/name, branch, commit), base branch, author and state. */
export interface FakePullRequest {
  head: string;
  branch: string;
  sha: string;
  base: string;
  author: { id: number; login: string };
  state: 'open' | 'closed';
}

export interface FakeGitea {
  url: string;
  repos: FakeGiteaRepo[];
  /** The OAuth application Berth is registered as. */
  app: { clientId: string; clientSecret: string; redirectUri: string };
  /** Access token → expiry (ms). */
  tokens: Map<string, number>;
  refreshTokens: Set<string>;
  /** Issues a token pair that expires in `seconds`. */
  issue(seconds: number): { accessToken: string; refreshToken: string; expiresAt: number };
  /** What Gitea's authorization page does once the user approves: a one-time code for that redirect URI. */
  authorize(redirectUri: string): string;
  webhooks: Map<string, { id: string; url: string; secret: string; events: string[] }[]>;
  comments: Map<string, string[]>;
  /** owner/name → user login → the permission "Get repository permissions for a user" answers (read, write, admin, owner); an unknown login is 404. */
  permissions: Map<string, Map<string, string>>;
  /** owner/name#index → the pull request "Get a pull request" answers; none is 404. */
  pullRequests: Map<string, FakePullRequest>;
  git: GitHttpServer;
  addGitRepo(owner: string, name: string, dir: string, branches: Record<string, string>): Promise<void>;
}

export async function startFakeGitea(t: Test): Promise<FakeGitea> {
  const grants = oauthStandIn({ access: 20, refresh: 24 });
  const { tokens, live } = grants;
  const git = await startGitHttpServer(t, { credential: (user, password) => user === 'oauth2' && live(password) });
  let url = '';
  let nextId = 40;
  /** Where each comment's body is: its pull request's list and its place in it. */
  const commentAt = new Map<number, { key: string; index: number }>();
  const gt: FakeGitea = {
    url: '',
    repos: [],
    app: { clientId: randomBytes(8).toString('hex'), clientSecret: `gto_${randomBytes(16).toString('hex')}`, redirectUri: 'https://berth.example.com/api/providers/gitea/callback' },
    tokens,
    refreshTokens: grants.refreshTokens,
    webhooks: new Map(),
    comments: new Map(),
    permissions: new Map(),
    pullRequests: new Map(),
    git,
    issue: grants.issue,
    authorize: grants.authorize,
    async addGitRepo(owner, name, dir, branches) {
      await git.addRepository(`${owner}/${name}`, dir);
      gt.repos.push({ id: 100 + gt.repos.length, owner, name, isPrivate: true, branches });
    },
  };

  const send = (res: http.ServerResponse, status: number, body?: Json, headers: Record<string, string> = {}) =>
    void res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }).end(body === undefined ? undefined : JSON.stringify(body));
  const apiError = (res: http.ServerResponse, status: number, message: string) => send(res, status, { message, url: `${url}/api/swagger` });

  /** A page of `items` with Gitea's headers: Link (next, last) and X-Total-Count. */
  const page = (res: http.ServerResponse, u: URL, items: Json[]) => {
    const limit = Math.min(Number(u.searchParams.get('limit') ?? 30), 50, PAGE_CAP);
    const n = Math.max(1, Number(u.searchParams.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / limit));
    const link = (p: number, rel: string) => {
      const x = new URL(u);
      x.searchParams.set('limit', String(limit));
      x.searchParams.set('page', String(p));
      return `<${x}>; rel="${rel}"`;
    };
    const links = [...(n < last ? [link(n + 1, 'next')] : []), link(last, 'last')];
    return send(res, 200, items.slice((n - 1) * limit, n * limit), { link: links.join(','), 'x-total-count': String(items.length) });
  };

  const owner = (login: string) => ({ id: 1, login, login_name: '', full_name: '', email: `${login}@noreply.example.com`, avatar_url: '', username: login });
  const repoJson = (r: FakeGiteaRepo) => ({
    id: r.id,
    owner: owner(r.owner),
    name: r.name,
    full_name: `${r.owner}/${r.name}`,
    description: '',
    empty: false,
    private: r.isPrivate,
    fork: false,
    html_url: `${url}/${r.owner}/${r.name}`,
    ssh_url: `git@127.0.0.1:${r.owner}/${r.name}.git`,
    clone_url: `${url}/${r.owner}/${r.name}.git`,
    default_branch: 'main',
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
  });

  const api = (req: http.IncomingMessage, res: http.ServerResponse, u: URL, body: Json) => {
    const token = /^(?:token|Bearer) (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!live(token)) return apiError(res, 401, token && tokens.has(token) ? 'token is expired' : 'user does not exist [uid: 0, name: ]');
    const route = `${req.method} ${u.pathname.slice('/api/v1'.length)}`;
    let m: RegExpExecArray | null;
    if (route === 'GET /user') return send(res, 200, { ...owner('gitea-admin'), is_admin: false, created: '2024-01-01T00:00:00Z' });
    if (route === 'GET /user/repos') return page(res, u, gt.repos.map(repoJson));
    if (!(m = /^(\w+) \/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(route))) return apiError(res, 404, 'not found');
    const r = gt.repos.find(x => x.owner === decodeURIComponent(m![2]!) && x.name === decodeURIComponent(m![3]!));
    if (!r) return apiError(res, 404, 'repository does not exist');
    const full = `${r.owner}/${r.name}`;
    const rest = `${m[1]} ${m[4] ?? ''}`;
    if (rest === 'GET /branches') {
      const all = Object.entries(r.branches).map(([name, id]) => ({
        name,
        commit: { id, message: 'update\n', url: `${url}/${full}/commit/${id}`, timestamp: '2024-01-01T00:00:00Z' },
        protected: false,
      }));
      return page(res, u, all);
    }
    if ((m = /^GET \/git\/commits\/(.+)$/.exec(rest))) {
      const ref = decodeURIComponent(m[1]!);
      const sha = r.branches[ref] ?? Object.values(r.branches).find(s => s === ref);
      if (!sha) return apiError(res, 404, `object does not exist [id: ${ref}, rel_path: ]`);
      return send(res, 200, {
        url: `${url}/api/v1/repos/${full}/git/commits/${sha}`,
        sha,
        created: '2024-01-01T00:00:00Z',
        html_url: `${url}/${full}/commit/${sha}`,
        commit: { message: 'update\n' },
        parents: [],
      });
    }
    if (rest === 'POST /hooks') {
      const hook = { id: String(nextId++), url: body.config?.url, secret: body.config?.secret, events: body.events };
      gt.webhooks.set(full, [...(gt.webhooks.get(full) ?? []), hook]);
      return send(res, 201, {
        id: Number(hook.id),
        type: body.type,
        config: { url: hook.url, content_type: body.config?.content_type },
        events: hook.events,
        active: body.active,
        created_at: '2024-01-01T00:00:00Z',
      });
    }
    if ((m = /^DELETE \/hooks\/(\d+)$/.exec(rest))) {
      const hooks = gt.webhooks.get(full) ?? [];
      if (!hooks.some(h => h.id === m![1])) return apiError(res, 404, 'hook does not exist');
      gt.webhooks.set(
        full,
        hooks.filter(h => h.id !== m![1]),
      );
      return send(res, 204);
    }
    // "Get repository permissions for a user": RepoCollaboratorPermission.
    if ((m = /^GET \/collaborators\/([^/]+)\/permission$/.exec(rest))) {
      const login = decodeURIComponent(m[1]!);
      const permission = gt.permissions.get(full)?.get(login);
      if (!permission) return apiError(res, 404, `user does not exist [uid: 0, name: ${login}]`);
      return send(res, 200, { permission, role_name: permission, user: owner(login) });
    }
    // "Get a pull request": PullRequest, its head and base branches with their repositories.
    if ((m = /^GET \/pulls\/(\d+)$/.exec(rest))) {
      const pr = gt.pullRequests.get(`${full}#${m[1]}`);
      if (!pr) return apiError(res, 404, 'pull request does not exist');
      const repoOf = (name: string) => {
        const x = gt.repos.find(y => `${y.owner}/${y.name}` === name);
        return x ? { id: x.id, name: x.name, full_name: name, owner: owner(x.owner), private: x.isPrivate, clone_url: `${url}/${name}.git` } : null;
      };
      return send(res, 200, {
        id: 3000 + Number(m[1]),
        number: Number(m[1]),
        url: `${url}/${full}/pulls/${m[1]}`,
        html_url: `${url}/${full}/pulls/${m[1]}`,
        title: `Pull request #${m[1]}`,
        state: pr.state,
        merged: false,
        user: { ...owner(pr.author.login), id: pr.author.id },
        head: { label: pr.branch, ref: pr.branch, sha: pr.sha, repo_id: repoOf(pr.head)?.id ?? 0, repo: repoOf(pr.head) },
        base: { label: pr.base, ref: pr.base, sha: r.branches[pr.base] ?? pr.sha, repo_id: r.id, repo: repoOf(full) },
        created_at: '2024-01-01T00:00:00Z',
      });
    }
    if ((m = /^POST \/issues\/(\d+)\/comments$/.exec(rest))) {
      const k = `${full}#${m[1]}`;
      gt.comments.set(k, [...(gt.comments.get(k) ?? []), body.body]);
      commentAt.set(nextId, { key: k, index: gt.comments.get(k)!.length - 1 });
      return send(res, 201, { id: nextId++, body: body.body, user: owner('gitea-admin'), html_url: `${url}/${full}/pulls/${m[1]}`, created_at: '2024-01-01T00:00:00Z' });
    }
    // "Edit a comment": PATCH /repos/{owner}/{repo}/issues/comments/{id}.
    if ((m = /^PATCH \/issues\/comments\/(\d+)$/.exec(rest))) {
      const at = commentAt.get(Number(m[1]));
      if (!at?.key.startsWith(`${full}#`)) return apiError(res, 404, 'comment does not exist');
      gt.comments.get(at.key)![at.index] = body.body;
      return send(res, 200, { id: Number(m[1]), body: body.body, user: owner('gitea-admin'), created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z' });
    }
    return apiError(res, 404, 'not found');
  };

  const oauth = (res: http.ServerResponse, form: URLSearchParams) => {
    const grant = form.get('grant_type');
    if (form.get('client_id') !== gt.app.clientId || form.get('client_secret') !== gt.app.clientSecret)
      return send(res, 400, { error: 'unauthorized_client', error_description: 'invalid client secret' });
    const code = form.get('code') ?? '';
    const good = grant === 'authorization_code' ? grants.redeem(code, form.get('redirect_uri')) : grant === 'refresh_token' && gt.refreshTokens.delete(form.get('refresh_token') ?? '');
    if (!good) return send(res, 400, { error: 'invalid_grant', error_description: grant === 'refresh_token' ? 'token was already used' : 'client is not authorized' });
    const pair = gt.issue(3600);
    return send(res, 200, { access_token: pair.accessToken, token_type: 'bearer', expires_in: 3600, refresh_token: pair.refreshToken });
  };

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', url);
    if (!u.pathname.startsWith('/api/v1/') && u.pathname !== '/login/oauth/access_token') {
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
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        if (u.pathname === '/login/oauth/access_token') return oauth(res, new URLSearchParams(raw));
        return api(req, res, u, raw ? JSON.parse(raw) : {});
      } catch (e) {
        return apiError(res, 500, String(e));
      }
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gt.url = url;
  t.teardown(
    () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return gt;
}
