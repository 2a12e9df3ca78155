// Bitbucket Cloud on loopback: the REST 2.0 endpoints Berth calls under /2.0, answering with the
// payloads of Bitbucket's REST API documentation (developer.atlassian.com/cloud/bitbucket/rest/:
// "Get current user", "List repositories in a workspace", "List open branches", "Get a commit",
// "Create a webhook for a repository", "Delete a webhook for a repository", "Create a comment on a
// pull request", "Get a pull request", "Get an explicit user permission for a repository", the paginated envelope
// { size, page, pagelen, next, values } and the error object { type: "error", error: { message } }),
// trimmed to the fields shown there and set to this
// server's names. Listings page by two through `next`. Basic auth as Bitbucket takes it: an API
// token with its account's e-mail, or a user name and app password; `retireAppPasswords()` refuses
// every app password from then on, as Atlassian's retirement will. Everything else (git's smart
// HTTP) goes to a `git http-backend` that accepts only user x-bitbucket-api-token-auth with a
// token, or a user with a live app password.
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { startGitHttpServer, type GitHttpServer } from '@berth/core/testing';

type Json = any;
const PAGE_CAP = 2;

export interface FakeBitbucketRepo {
  workspace: string;
  slug: string;
  isPrivate: boolean;
  branches: Record<string, string>;
}

/** A pull request as Bitbucket holds it: its source (repository workspace/slug, branch, commit), destination branch, author (uuid, nickname) and state. */
export interface FakePullRequest {
  head: string;
  branch: string;
  sha: string;
  base: string;
  author: { id: string; login: string };
  state: 'OPEN' | 'MERGED' | 'DECLINED';
}

export interface FakeBitbucket {
  /** The API's root (`<origin>/2.0`): the provider's apiUrl. */
  apiUrl: string;
  /** Where git clones from: the provider's webUrl. */
  webUrl: string;
  repos: FakeBitbucketRepo[];
  /** A user: user name, the account's e-mail, an API token and an app password. */
  user: { username: string; email: string; apiToken: string; appPassword: string };
  /** From now on every app password is refused (401), as when Atlassian retires them. */
  retireAppPasswords(): void;
  webhooks: Map<string, { id: string; url: string; secret: string; events: string[] }[]>;
  comments: Map<string, string[]>;
  /** workspace/slug → user uuid or account_id → the explicit permission (read, write, admin) "Get an explicit user permission for a repository" answers; none is 404. */
  permissions: Map<string, Map<string, string>>;
  /** workspace/slug#id → the pull request "Get a pull request" answers; none is 404. */
  pullRequests: Map<string, FakePullRequest>;
  git: GitHttpServer;
  addGitRepo(workspace: string, slug: string, dir: string, branches: Record<string, string>): Promise<void>;
  /** bitbucket.create's input for a connection of this user with its API token, in the workspace `team`. */
  connection(name: string): { authId: string; name: string; bitbucketUsername: string; bitbucketEmail: string; apiToken: string; bitbucketWorkspaceName: string };
}

export async function startFakeBitbucket(t: Test): Promise<FakeBitbucket> {
  let retired = false;
  const user = { username: 'starbuck', email: 'starbuck@example.com', apiToken: `ATATT${randomBytes(24).toString('hex')}`, appPassword: `ATBB${randomBytes(16).toString('hex')}` };
  const git = await startGitHttpServer(t, {
    credential: (name, password) => (name === 'x-bitbucket-api-token-auth' && password === user.apiToken) || (!retired && name === user.username && password === user.appPassword),
  });
  let origin = '';
  /** Where each comment's body is: its pull request's list and its place in it. */
  const commentAt = new Map<number, { key: string; index: number }>();
  const bb: FakeBitbucket = {
    apiUrl: '',
    webUrl: '',
    repos: [],
    user,
    retireAppPasswords: () => void (retired = true),
    connection: name => ({ authId: 'x', name, bitbucketUsername: user.username, bitbucketEmail: user.email, apiToken: user.apiToken, bitbucketWorkspaceName: 'team' }),
    webhooks: new Map(),
    comments: new Map(),
    permissions: new Map(),
    pullRequests: new Map(),
    git,
    async addGitRepo(workspace, slug, dir, branches) {
      await git.addRepository(`${workspace}/${slug}`, dir);
      bb.repos.push({ workspace, slug, isPrivate: true, branches });
    },
  };

  const send = (res: http.ServerResponse, status: number, body?: Json) =>
    void res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' }).end(body === undefined ? undefined : JSON.stringify(body));
  const error = (res: http.ServerResponse, status: number, message: string) => send(res, status, { type: 'error', error: { message } });

  /** Bitbucket's paginated envelope, `next` while pages remain. */
  const page = (u: URL, items: Json[]) => {
    const pagelen = Math.min(Number(u.searchParams.get('pagelen') ?? 10), 100, PAGE_CAP);
    const n = Math.max(1, Number(u.searchParams.get('page') ?? 1));
    const next = new URL(u);
    next.searchParams.set('pagelen', String(pagelen));
    next.searchParams.set('page', String(n + 1));
    return { size: items.length, page: n, pagelen, ...(n * pagelen < items.length ? { next: next.toString() } : {}), values: items.slice((n - 1) * pagelen, n * pagelen) };
  };

  const repoJson = (r: FakeBitbucketRepo) => ({
    type: 'repository',
    uuid: `{${randomUUID()}}`,
    full_name: `${r.workspace}/${r.slug}`,
    name: r.slug,
    slug: r.slug,
    is_private: r.isPrivate,
    scm: 'git',
    workspace: { type: 'workspace', slug: r.workspace, name: r.workspace, uuid: '{a15fb181-db1f-48f7-b41f-e1eff06929d6}' },
    mainbranch: { type: 'branch', name: 'main' },
    links: {
      html: { href: `${origin}/${r.workspace}/${r.slug}` },
      clone: [
        { name: 'https', href: `${origin.replace('://', `://${user.username}@`)}/${r.workspace}/${r.slug}.git` },
        { name: 'ssh', href: `git@127.0.0.1:${r.workspace}/${r.slug}.git` },
      ],
    },
    created_on: '2011-12-20T16:35:06.480042+00:00',
    updated_on: '2012-06-13T17:16:32.372432+00:00',
  });

  const authorized = (header: string | undefined): boolean => {
    const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
    if (!m) return false;
    const plain = Buffer.from(m[1]!, 'base64').toString('utf8');
    const [name, password] = [plain.slice(0, plain.indexOf(':')), plain.slice(plain.indexOf(':') + 1)];
    return (name === user.email && password === user.apiToken) || (!retired && name === user.username && password === user.appPassword);
  };

  const api = (req: http.IncomingMessage, res: http.ServerResponse, u: URL, body: Json) => {
    if (!authorized(req.headers.authorization)) return error(res, 401, 'Invalid credentials');
    const route = `${req.method} ${u.pathname.slice('/2.0'.length)}`;
    let m: RegExpExecArray | null;
    if (route === 'GET /user')
      return send(res, 200, { type: 'user', username: user.username, display_name: 'Kara Thrace', uuid: '{d301aafa-d676-4ee0-88be-962be7417567}', account_id: '557058:ba8948b2' });
    if ((m = /^GET \/repositories\/([^/]+)$/.exec(route))) {
      const ws = decodeURIComponent(m[1]!);
      return send(res, 200, page(u, bb.repos.filter(r => r.workspace === ws).map(repoJson)));
    }
    if (!(m = /^(\w+) \/repositories\/([^/]+)\/([^/]+)(\/.*)?$/.exec(route))) return error(res, 404, 'Resource not found');
    const [ws, slug] = [decodeURIComponent(m[2]!), decodeURIComponent(m[3]!)];
    const r = bb.repos.find(x => x.workspace === ws && x.slug === slug);
    if (!r) return error(res, 404, `Repository ${ws}/${slug} not found`);
    const full = `${ws}/${slug}`;
    const rest = `${m[1]} ${m[4] ?? ''}`;
    if (rest === 'GET /refs/branches') {
      const all = Object.entries(r.branches).map(([name, hash]) => ({
        type: 'branch',
        name,
        target: { type: 'commit', hash, date: '2012-06-13T17:16:32+00:00', message: 'update\n', author: { type: 'author', raw: 'Kara Thrace <starbuck@example.com>' } },
        links: { html: { href: `${origin}/${full}/branch/${name}` } },
      }));
      return send(res, 200, page(u, all));
    }
    if ((m = /^GET \/commit\/(.+)$/.exec(rest))) {
      const ref = decodeURIComponent(m[1]!);
      const hash = r.branches[ref] ?? Object.values(r.branches).find(s => s === ref);
      if (!hash) return error(res, 404, `Commit not found`);
      return send(res, 200, { type: 'commit', hash, date: '2012-06-13T17:16:32+00:00', message: 'update\n', parents: [], repository: { type: 'repository', full_name: full } });
    }
    if (rest === 'POST /hooks') {
      const hook = { id: `{${randomUUID()}}`, url: body.url, secret: body.secret, events: body.events };
      bb.webhooks.set(full, [...(bb.webhooks.get(full) ?? []), hook]);
      return send(res, 201, { uuid: hook.id, url: hook.url, description: body.description, subject_type: 'repository', active: body.active, events: body.events, created_at: '2012-06-13T17:16:32Z' });
    }
    if ((m = /^DELETE \/hooks\/(.+)$/.exec(rest))) {
      const id = decodeURIComponent(m[1]!);
      const hooks = bb.webhooks.get(full) ?? [];
      if (!hooks.some(h => h.id === id)) return error(res, 404, 'Webhook not found');
      bb.webhooks.set(
        full,
        hooks.filter(h => h.id !== id),
      );
      return send(res, 204);
    }
    // "Get an explicit user permission for a repository": repository_user_permission.
    if ((m = /^GET \/permissions-config\/users\/([^/]+)$/.exec(rest))) {
      const id = decodeURIComponent(m[1]!);
      const permission = bb.permissions.get(full)?.get(id);
      if (!permission) return error(res, 404, 'No explicit permission found for the user');
      const who = id.startsWith('{') ? { uuid: id } : { account_id: id };
      return send(res, 200, {
        type: 'repository_user_permission',
        permission,
        user: { type: 'user', display_name: 'Pull Request Author', ...who },
        repository: { type: 'repository', full_name: full, name: r.slug },
        links: { self: { href: `${bb.apiUrl}/repositories/${full}/permissions-config/users/${encodeURIComponent(id)}` } },
      });
    }
    // "Get a pull request": its source and destination (branch, commit as a short hash, repository), author and state.
    if ((m = /^GET \/pullrequests\/(\d+)$/.exec(rest))) {
      const pr = bb.pullRequests.get(`${full}#${m[1]}`);
      if (!pr) return error(res, 404, `Pull request ${m[1]} not found`);
      const side = (name: string, branch: string, hash: string) => ({
        branch: { name: branch },
        commit: { type: 'commit', hash: hash.slice(0, 12) },
        repository: { type: 'repository', full_name: name, name: name.split('/')[1] },
      });
      return send(res, 200, {
        type: 'pullrequest',
        id: Number(m[1]),
        title: `Pull request #${m[1]}`,
        state: pr.state,
        author: { type: 'user', uuid: pr.author.id, nickname: pr.author.login, display_name: pr.author.login },
        source: side(pr.head, pr.branch, pr.sha),
        destination: side(full, pr.base, r.branches[pr.base] ?? pr.sha),
        links: { html: { href: `${origin}/${full}/pull-requests/${m[1]}` } },
        created_on: '2012-06-13T17:16:32Z',
      });
    }
    if ((m = /^POST \/pullrequests\/(\d+)\/comments$/.exec(rest))) {
      const k = `${full}#${m[1]}`;
      bb.comments.set(k, [...(bb.comments.get(k) ?? []), body.content.raw]);
      const id = 1000 + commentAt.size;
      commentAt.set(id, { key: k, index: bb.comments.get(k)!.length - 1 });
      return send(res, 201, { type: 'pullrequest_comment', id, content: { raw: body.content.raw, markup: 'markdown', html: '' }, created_on: '2012-06-13T17:16:32Z' });
    }
    // "Update a comment on a pull request": PUT .../pullrequests/{id}/comments/{comment_id}.
    if ((m = /^PUT \/pullrequests\/(\d+)\/comments\/(\d+)$/.exec(rest))) {
      const at = commentAt.get(Number(m[2]));
      if (at?.key !== `${full}#${m[1]}`) return error(res, 404, 'Comment not found');
      bb.comments.get(at.key)![at.index] = body.content.raw;
      return send(res, 200, { type: 'pullrequest_comment', id: Number(m[2]), content: { raw: body.content.raw, markup: 'markdown', html: '' }, updated_on: '2012-06-13T17:16:32Z' });
    }
    return error(res, 404, 'Resource not found');
  };

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', origin);
    if (!u.pathname.startsWith('/2.0/')) {
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
        return api(req, res, u, raw ? JSON.parse(raw) : {});
      } catch (e) {
        return error(res, 500, String(e));
      }
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  bb.apiUrl = `${origin}/2.0`;
  bb.webUrl = origin;
  t.teardown(
    () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return bb;
}
