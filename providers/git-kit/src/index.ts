// What the git forges' providers share when they read a webhook delivery: headers and body fields
// read without trusting their shape (a string that could not be stored reads as U+FFFD), a ref
// split into branch or tag, the files the pushed commits list, an HMAC signature header compared in
// constant time, and GitHub's push and pull_request events — which Gitea (and Forgejo) send in the
// same shape. Each forge's own reading stays in its provider.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { storable, type DeliveryHeaders, type GitDelivery, type PullRequestEvent, type SignatureCheck } from '@berth/core';

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
