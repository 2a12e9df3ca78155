// GitLab on loopback, as a self-managed server: the REST endpoints Berth calls under /api/v4 and
// the OAuth token endpoint, answering with the payloads of GitLab's REST API documentation
// (docs.gitlab.com/api/: projects.md "List all projects", members.md "Get a member of a group or
// project, including inherited and invited members", branches.md "List repository branches",
// commits.md "Get a single commit", projects.md "Get a single project", merge_requests.md "Get single MR", project hooks "Add a webhook to a project", notes.md "Create
// new merge request note", users.md "Get the current user", oauth2.md "Refresh an access token"),
// trimmed to the fields shown there and set to this server's names. Listings page by two with
// GitLab's headers (x-page, x-next-page, x-total, Link). Access tokens expire: an expired one is
// refused with GitLab's 401 body, as is a token never issued. Everything else (git's smart HTTP)
// goes to a `git http-backend` that accepts only user "oauth2" with a live token.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { oauthStandIn, startGitHttpServer, type GitHttpServer } from '@berth/core/testing';

type Json = any;
const PAGE_CAP = 2;

export interface FakeProject {
  id: number;
  namespace: string;
  path: string;
  visibility: 'private' | 'public';
  branches: Record<string, string>;
}

/** A merge request as GitLab holds it: its source project (namespace/path), branch and commit, target branch, author and state. */
export interface FakeMergeRequest {
  head: string;
  branch: string;
  sha: string;
  base: string;
  author: { id: number; login: string };
  state: 'opened' | 'closed' | 'merged';
}

export interface FakeGitlab {
  url: string;
  projects: FakeProject[];
  /** The OAuth application Berth is registered as. */
  app: { clientId: string; secret: string; redirectUri: string };
  /** Access token → expiry (ms); refresh token → true while unused. */
  tokens: Map<string, number>;
  refreshTokens: Set<string>;
  /** Issues a token pair that expires in `seconds`. */
  issue(seconds: number): { accessToken: string; refreshToken: string; expiresAt: number };
  /** What GitLab's authorization page does once the user approves: a one-time code for that redirect URI. */
  authorize(redirectUri: string): string;
  webhooks: Map<string, { id: string; url: string; token: string; pushEvents: boolean; mergeRequestsEvents: boolean }[]>;
  /** Project path → user id → the member's access level (10 Guest ... 30 Developer, 40 Maintainer, 50 Owner), direct or inherited. */
  members: Map<string, Map<number, { username: string; accessLevel: number }>>;
  notes: Map<string, string[]>;
  /** namespace/path!iid → the merge request "Get single MR" answers; none is 404. */
  mergeRequests: Map<string, FakeMergeRequest>;
  git: GitHttpServer;
  addGitProject(namespace: string, path: string, dir: string, branches: Record<string, string>): Promise<void>;
}

export async function startFakeGitlab(t: Test): Promise<FakeGitlab> {
  const grants = oauthStandIn({ access: 32, refresh: 32 });
  const { tokens, live } = grants;
  const git = await startGitHttpServer(t, { credential: (user, password) => user === 'oauth2' && live(password) });
  let url = '';
  let nextId = 300;
  /** Where each note's body is: its pull request's list and its place in it. */
  const noteAt = new Map<number, { key: string; index: number }>();
  const gl: FakeGitlab = {
    url: '',
    projects: [],
    app: { clientId: `app-${randomBytes(4).toString('hex')}`, secret: `gloas-${randomBytes(8).toString('hex')}`, redirectUri: 'https://berth.example.com/api/providers/gitlab/callback' },
    tokens,
    refreshTokens: grants.refreshTokens,
    webhooks: new Map(),
    members: new Map(),
    notes: new Map(),
    mergeRequests: new Map(),
    git,
    issue: grants.issue,
    authorize: grants.authorize,
    async addGitProject(namespace, path, dir, branches) {
      await git.addRepository(`${namespace}/${path}`, dir);
      gl.projects.push({ id: 1000 + gl.projects.length, namespace, path, visibility: 'private', branches });
    },
  };

  const send = (res: http.ServerResponse, status: number, body: Json, headers: Record<string, string> = {}) =>
    void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body === undefined ? undefined : JSON.stringify(body));
  const notFound = (res: http.ServerResponse, what = 'Project') => send(res, 404, { message: `404 ${what} Not Found` });

  const page = (u: URL, items: Json[]) => {
    const perPage = Math.min(Number(u.searchParams.get('per_page') ?? 20), 100, PAGE_CAP);
    const n = Math.max(1, Number(u.searchParams.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number) => {
      const x = new URL(u);
      x.searchParams.set('per_page', String(perPage));
      x.searchParams.set('page', String(p));
      return x.toString();
    };
    const links = [...(n < last ? [`<${link(n + 1)}>; rel="next"`] : []), `<${link(1)}>; rel="first"`, `<${link(last)}>; rel="last"`];
    return {
      items: items.slice((n - 1) * perPage, n * perPage),
      headers: {
        link: links.join(', '),
        'x-page': String(n),
        'x-per-page': String(perPage),
        'x-total': String(items.length),
        'x-total-pages': String(last),
        'x-next-page': n < last ? String(n + 1) : '',
      },
    };
  };

  const projectJson = (p: FakeProject) => ({
    id: p.id,
    description: null,
    name: p.path,
    name_with_namespace: `${p.namespace} / ${p.path}`,
    path: p.path,
    path_with_namespace: `${p.namespace}/${p.path}`,
    created_at: '2013-09-30T13:46:02Z',
    default_branch: 'main',
    tag_list: [],
    topics: [],
    ssh_url_to_repo: `git@127.0.0.1:${p.namespace}/${p.path}.git`,
    http_url_to_repo: `${url}/${p.namespace}/${p.path}.git`,
    web_url: `${url}/${p.namespace}/${p.path}`,
    visibility: p.visibility,
    namespace: { id: 3, name: p.namespace.split('/').pop(), path: p.namespace.split('/').pop(), kind: 'group', full_path: p.namespace },
    last_activity_at: '2013-09-30T13:46:02Z',
  });

  const api = (req: http.IncomingMessage, res: http.ServerResponse, u: URL, body: Json) => {
    const token = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !tokens.has(token)) return send(res, 401, { message: '401 Unauthorized' });
    if (!live(token)) {
      const why = 'Token is expired. You can either do re-authorization or token refresh.';
      return send(res, 401, { error: 'invalid_token', error_description: why }, { 'www-authenticate': `Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="${why}"` });
    }
    const route = `${req.method} ${u.pathname.slice('/api/v4'.length)}`;
    let m: RegExpExecArray | null;
    if (route === 'GET /user') return send(res, 200, { id: 1, username: 'john_smith', name: 'John Smith', state: 'active', web_url: `${url}/john_smith` });
    if (route === 'GET /projects') {
      const { items, headers } = page(u, gl.projects.map(projectJson));
      return send(res, 200, items, headers);
    }
    if (!(m = /^(\w+) \/projects\/([^/]+)(\/.*)?$/.exec(route))) return notFound(res, 'Not');
    const key = decodeURIComponent(m[2]!);
    const p = gl.projects.find(x => String(x.id) === key || `${x.namespace}/${x.path}` === key);
    if (!p) return notFound(res);
    const full = `${p.namespace}/${p.path}`;
    const rest = `${m[1]} ${m[3] ?? ''}`;
    // projects.md "Get a single project".
    if (rest === 'GET ') return send(res, 200, projectJson(p));
    // merge_requests.md "Get single MR": its source and target projects and branches, head commit, state and author.
    if ((m = /^GET \/merge_requests\/(\d+)$/.exec(rest))) {
      const mr = gl.mergeRequests.get(`${full}!${m[1]}`);
      if (!mr) return notFound(res, '');
      const source = gl.projects.find(x => `${x.namespace}/${x.path}` === mr.head);
      return send(res, 200, {
        id: 9000 + Number(m[1]),
        iid: Number(m[1]),
        project_id: p.id,
        title: `Merge request !${m[1]}`,
        state: mr.state,
        target_branch: mr.base,
        source_branch: mr.branch,
        author: { id: mr.author.id, username: mr.author.login, name: mr.author.login, state: 'active', web_url: `${url}/${mr.author.login}` },
        source_project_id: source?.id ?? 0,
        target_project_id: p.id,
        sha: mr.sha,
        web_url: `${url}/${full}/-/merge_requests/${m[1]}`,
        created_at: '2017-04-29T08:46:00Z',
      });
    }
    if (rest === 'GET /repository/branches') {
      const all = Object.entries(p.branches).map(([name, id]) => ({
        name,
        merged: false,
        protected: name === 'main',
        default: name === 'main',
        developers_can_push: false,
        developers_can_merge: false,
        can_push: true,
        web_url: `${url}/${full}/-/tree/${name}`,
        commit: { id, short_id: id.slice(0, 8), title: 'update', author_name: 'John Smith', committed_date: '2012-06-28T03:44:20-07:00', parent_ids: [] },
      }));
      const { items, headers } = page(u, all);
      return send(res, 200, items, headers);
    }
    if ((m = /^GET \/repository\/commits\/(.+)$/.exec(rest))) {
      const ref = decodeURIComponent(m[1]!);
      const id = p.branches[ref] ?? Object.values(p.branches).find(s => s === ref);
      if (!id) return notFound(res, 'Commit');
      return send(res, 200, {
        id,
        short_id: id.slice(0, 8),
        title: 'update',
        author_name: 'John Smith',
        created_at: '2012-09-20T09:06:12+03:00',
        message: 'update',
        parent_ids: [],
        web_url: `${url}/${full}/-/commit/${id}`,
      });
    }
    if (rest === 'POST /hooks') {
      const flag = (v: unknown) => v === true || v === 'true';
      const hook = { id: String(nextId++), url: body.url, token: body.token, pushEvents: flag(body.push_events), mergeRequestsEvents: flag(body.merge_requests_events) };
      gl.webhooks.set(full, [...(gl.webhooks.get(full) ?? []), hook]);
      return send(res, 201, {
        id: Number(hook.id),
        url: hook.url,
        project_id: p.id,
        push_events: hook.pushEvents,
        merge_requests_events: hook.mergeRequestsEvents,
        enable_ssl_verification: true,
        created_at: '2012-10-12T17:04:47Z',
      });
    }
    if ((m = /^DELETE \/hooks\/(\d+)$/.exec(rest))) {
      const hooks = gl.webhooks.get(full) ?? [];
      if (!hooks.some(h => h.id === m![1])) return notFound(res, 'Hook');
      gl.webhooks.set(
        full,
        hooks.filter(h => h.id !== m![1]),
      );
      return void res.writeHead(204).end();
    }
    // members.md "Get a member of a group or project, including inherited and invited members".
    if ((m = /^GET \/members\/all\/(\d+)$/.exec(rest))) {
      const member = gl.members.get(full)?.get(Number(m[1]));
      if (!member) return notFound(res, '');
      return send(res, 200, {
        id: Number(m[1]),
        username: member.username,
        name: member.username,
        state: 'active',
        avatar_url: null,
        web_url: `${url}/${member.username}`,
        access_level: member.accessLevel,
        created_at: '2012-09-22T14:13:35Z',
        expires_at: null,
      });
    }
    if ((m = /^POST \/merge_requests\/(\d+)\/notes$/.exec(rest))) {
      const k = `${full}!${m[1]}`;
      gl.notes.set(k, [...(gl.notes.get(k) ?? []), body.body]);
      noteAt.set(nextId, { key: k, index: gl.notes.get(k)!.length - 1 });
      return send(res, 201, { id: nextId++, body: body.body, author: { id: 1, username: 'john_smith' }, created_at: '2013-10-02T09:22:45Z', system: false, noteable_type: 'MergeRequest' });
    }
    // notes.md "Modify existing merge request note": PUT .../merge_requests/:iid/notes/:note_id.
    if ((m = /^PUT \/merge_requests\/(\d+)\/notes\/(\d+)$/.exec(rest))) {
      const at = noteAt.get(Number(m[2]));
      if (at?.key !== `${full}!${m[1]}`) return notFound(res, 'Note');
      gl.notes.get(at.key)![at.index] = body.body;
      return send(res, 200, { id: Number(m[2]), body: body.body, author: { id: 1, username: 'john_smith' }, created_at: '2013-10-02T09:22:45Z', system: false, noteable_type: 'MergeRequest' });
    }
    return notFound(res, 'Not');
  };

  const oauth = (res: http.ServerResponse, form: URLSearchParams) => {
    const refresh = form.get('refresh_token') ?? '';
    const grant = form.get('grant_type');
    if ((grant !== 'refresh_token' && grant !== 'authorization_code') || form.get('client_id') !== gl.app.clientId || form.get('client_secret') !== gl.app.secret) {
      return send(res, 401, {
        error: 'invalid_client',
        error_description: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
      });
    }
    // oauth2.md "Authorization code flow": the code is good once, for the redirect URI it was issued to.
    const code = form.get('code') ?? '';
    if (grant === 'authorization_code' ? !grants.redeem(code, form.get('redirect_uri')) : !gl.refreshTokens.delete(refresh))
      return send(res, 400, {
        error: 'invalid_grant',
        error_description: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
      });
    const pair = gl.issue(7200);
    return send(res, 200, { access_token: pair.accessToken, token_type: 'Bearer', expires_in: 7200, refresh_token: pair.refreshToken, created_at: pair.expiresAt - 7200 });
  };

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', url);
    if (!u.pathname.startsWith('/api/v4/') && u.pathname !== '/oauth/token') {
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
        if (u.pathname === '/oauth/token') return oauth(res, new URLSearchParams(raw));
        const json = raw && String(req.headers['content-type']).includes('json') ? JSON.parse(raw) : Object.fromEntries(new URLSearchParams(raw));
        return api(req, res, u, json);
      } catch (e) {
        return send(res, 500, { message: String(e) });
      }
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gl.url = url;
  t.teardown(
    () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return gl;
}
