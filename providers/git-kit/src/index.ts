// What the git forges' providers share when they read a webhook delivery: headers and body fields
// read without trusting their shape (a string that could not be stored reads as U+FFFD), a ref
// split into branch or tag, the files the pushed commits list, an HMAC signature header compared in
// constant time, and GitHub's push and pull_request events — which Gitea (and Forgejo) send in the
// same shape. Each forge's own reading stays in its provider. And what the forges that speak plain
// REST share when they call their API: one JSON call whose refusals become the contract's failures
// and which follows no link to another host, every page of a listing, and the OAuth token endpoint.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { GitProviderError, storable, type DeliveryHeaders, type GitAccountUpdate, type GitDelivery, type GitFailure, type PullRequestEvent, type SignatureCheck } from '@berth/core';

/** A header's first value, null when absent or empty. */
export const header = (h: DeliveryHeaders, name: string): string | null => {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s ? s : null;
};
// A NUL or an unpaired surrogate in a string of the body is read as U+FFFD (core's storable): the
// delivery log can hold it, and no branch, commit or image name matches it.
export const str = (v: unknown): string | null => (typeof v === 'string' && v ? storable(v) : null);
export const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
/** An id sent as a number or a string, as text. */
export const idOf = (v: unknown): string | null => (typeof v === 'number' ? String(v) : str(v));

/** refs/heads/<branch> or refs/tags/<tag>; neither for anything else. */
export function refParts(ref: string | null): { branch: string | null; tag: string | null } {
  if (ref?.startsWith('refs/heads/')) return { branch: ref.slice(11), tag: null };
  if (ref?.startsWith('refs/tags/')) return { branch: null, tag: ref.slice(10) };
  return { branch: null, tag: null };
}

/** The files GitHub's, Gitea's and GitLab's commits list as added, modified or removed. */
export function commitPaths(commits: unknown[]): string[] {
  return commits.flatMap(c => ['added', 'modified', 'removed'].flatMap(k => arr(obj(c)[k]).filter((p): p is string => typeof p === 'string')));
}

/** A delivery of an event that is no push: nothing pushed, nothing touched. */
export function eventOnly(event: string, deliveryId: string | null, kind: 'ping' | 'other'): GitDelivery {
  return { event, deliveryId, kind, branch: null, tag: null, deleted: false, commit: null, message: null, paths: null };
}

/** A delivery carrying a pull request event: its head branch and commit stand for the pushed ones. */
export function pullRequestDelivery(event: string, deliveryId: string | null, pullRequest: PullRequestEvent): GitDelivery {
  return { event, deliveryId, kind: 'pullRequest', branch: pullRequest.headBranch || null, tag: null, deleted: false, commit: pullRequest.headSha, message: null, paths: null, pullRequest };
}

/** Two texts compared in constant time (a secret, a signature). */
export function equalText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * An HMAC-SHA256 signature header of the raw body (GitHub's X-Hub-Signature-256 with prefix
 * "sha256=", Gitea's X-Gitea-Signature without one): null when the delivery does not carry it.
 */
export function hmacSignature(h: DeliveryHeaders, raw: Buffer, secret: string, name: string, prefix: string): SignatureCheck | null {
  const sent = header(h, name);
  if (!sent) return null;
  const expected = `${prefix}${createHmac('sha256', secret).update(raw).digest('hex')}`;
  return equalText(sent, expected) ? { ok: true } : { ok: false, reason: `bad signature: ${name} does not match the body signed with the webhook secret` };
}

/**
 * GitHub's push, pull_request and ping events, as GitHub sends them and Gitea imitates them;
 * `action` renames a forge's own pull request actions to GitHub's (Gitea's "synchronized").
 */
export function readGithubShaped(event: string, deliveryId: string | null, body: Record<string, unknown>, action: (sent: string) => string = a => a): GitDelivery {
  if (event === 'ping') return eventOnly(event, deliveryId, 'ping');
  if (event === 'pull_request') return githubPullRequest(event, deliveryId, body, action);
  if (event !== 'push') return eventOnly(event, deliveryId, 'other');
  const head = obj(body.head_commit);
  const commits = arr(body.commits);
  const last = obj(commits.at(-1));
  return {
    event,
    deliveryId,
    kind: 'push',
    ...refParts(str(body.ref)),
    deleted: body.deleted === true,
    commit: str(head.id) ?? str(body.after),
    message: str(head.message) ?? str(last.message),
    paths: commitPaths(commits),
  };
}

/** The pull_request event: the pull request, its head and base, its author and labels (author_association is not read: the forge's API says who may push). */
function githubPullRequest(event: string, deliveryId: string | null, body: Record<string, unknown>, action: (sent: string) => string): GitDelivery {
  const pr = obj(body.pull_request);
  const head = obj(pr.head);
  const base = obj(pr.base);
  const headRepo = str(obj(head.repo).full_name);
  const baseRepo = str(obj(base.repo).full_name) ?? str(obj(body.repository).full_name);
  const number = typeof pr.number === 'number' ? pr.number : typeof body.number === 'number' ? body.number : 0;
  return pullRequestDelivery(event, deliveryId, {
    action: action(str(body.action) ?? ''),
    id: storable(String(pr.id ?? '')),
    number,
    url: str(pr.html_url) ?? '',
    title: str(pr.title) ?? '',
    headBranch: str(head.ref) ?? '',
    headSha: str(head.sha),
    baseBranch: str(base.ref) ?? '',
    repository: baseRepo,
    fromFork: Boolean(headRepo && baseRepo && headRepo !== baseRepo),
    headRepository: headRepo ?? baseRepo,
    author: { id: idOf(obj(pr.user).id), login: str(obj(pr.user).login) ?? str(obj(body.sender).login) },
    labels: arr(pr.labels)
      .map(l => str(obj(l).name))
      .filter((l): l is string => l !== null),
  });
}

/** A stored setting or secret as trimmed text ('' when absent). */
export const text = (v: unknown): string => (v === null || v === undefined ? '' : String(v)).trim();

/** The contract's failure for a forge that did not answer: the network's error code, else its message. */
export function unreachable(label: string, e: unknown): GitProviderError {
  return new GitProviderError('connect', `${label} cannot be reached: ${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message}`, { cause: e });
}

/** How one forge's REST API is called: its root, the request's credential, and what its refusals say. */
export interface RestApi {
  /** The forge's name in messages ("Gitea"). */
  label: string;
  /** The API's root; a path is appended to it, and a full URL (a next link) must be on its origin. */
  root: string;
  /** The Authorization header (read when the call is made: a missing credential fails before any request). */
  authorization: () => string;
  /** The message of an error answer's body. */
  said: (body: any) => string | undefined;
  /** The failure for a 401 or 403, when the forge has more to say than that the credential was refused. */
  refused: (status: number, said: string) => GitProviderError;
}

/**
 * One JSON call: the body (null for 204 or an answer that is not JSON) and the answer's headers. A
 * link to another host is not followed (it would carry the credential there); a redirect fails; 30
 * seconds at most. 401/403 fail as the forge's `refused` says; a 404 of a commit, an access check
 * or a pull request is `missing`, of anything else a failure of its step.
 */
export async function restCall(api: RestApi, step: GitFailure, pathOrUrl: string, init: { method?: string; body?: unknown } = {}): Promise<{ body: any; headers: Headers }> {
  const url = pathOrUrl.startsWith('/') ? `${api.root}${pathOrUrl}` : pathOrUrl;
  if (new URL(url).origin !== new URL(api.root).origin) throw new GitProviderError(step, `${api.label}: a link to another host (${new URL(url).origin}) was not followed`);
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { authorization: api.authorization(), accept: 'application/json', ...(init.body ? { 'content-type': 'application/json' } : {}) },
      body: init.body ? JSON.stringify(init.body) : undefined,
      redirect: 'error',
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    if (e instanceof GitProviderError) throw e;
    throw unreachable(api.label, e);
  }
  const body = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.ok) return { body, headers: res.headers };
  const said = api.said(body) ?? res.statusText ?? String(res.status);
  if (res.status === 401 || res.status === 403) throw api.refused(res.status, said);
  if (res.status === 404) throw new GitProviderError(step === 'commit' || step === 'access' || step === 'pullRequest' ? 'missing' : step, `${api.label}: not found (${said})`);
  throw new GitProviderError(step, `${api.label} answered ${res.status}: ${said}`);
}

/** Every item of a paged listing: `page` reads one page and names the next (null at the end); 1000 pages at most. */
export async function allPages<T>(label: string, step: GitFailure, first: string, page: (url: string) => Promise<{ items: T[]; next: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let next: string | null = first;
  for (let pages = 0; next; pages++) {
    if (pages >= 1000) throw new GitProviderError(step, `${label}: more than 1000 pages`);
    const read: { items: T[]; next: string | null } = await page(next);
    out.push(...read.items);
    next = read.next;
  }
  return out;
}

/**
 * An OAuth token endpoint's answer to a form (an authorization code's exchange, a refresh): the
 * new pair and its expiry in seconds since the epoch (from the answer's created_at when it gives
 * one). A refresh token it does not renew stays `kept`.
 */
export async function oauthToken(label: string, url: string, form: URLSearchParams, what: string, kept: string | null): Promise<GitAccountUpdate> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', body: form, headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    throw unreachable(label, e);
  }
  const body = (await res.json().catch(() => ({}))) as { access_token?: string; refresh_token?: string; expires_in?: number; created_at?: number; error_description?: string; error?: string };
  if (!res.ok || !body.access_token) throw new GitProviderError('credentials', `${label} refused to ${what}: ${body.error_description || body.error || res.status}`);
  const createdAt = Number(body.created_at) || Math.floor(Date.now() / 1000);
  return { settings: { expiresAt: body.expires_in ? createdAt + Number(body.expires_in) : null }, secrets: { accessToken: body.access_token, refreshToken: body.refresh_token ?? kept } };
}
