// What a delivery says, read the same way for every provider: who sent it (recognised by its
// event headers), its delivery id, the event (a push of a branch or a tag, a ping, anything
// else), the pushed ref, its head commit and message, and the files the pushed commits touched.
// And whether it is signed with the workload's secret, by each provider's own scheme, compared
// in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { storable } from '@berth/core';
import { bitbucketPullRequest, giteaAction, gitlabMergeRequest, pullRequestDelivery } from './pull-requests.ts';

export type Provider = 'github' | 'gitea' | 'gitlab' | 'bitbucket' | 'dockerhub' | 'generic';
type Headers = Record<string, string | string[] | undefined>;

export interface Delivery {
  provider: Provider;
  /** The provider's event name as sent (push, Push Hook, repo:push...). */
  event: string;
  deliveryId: string | null;
  /** push: a branch or tag was pushed; pullRequest: a pull request changed (previews); ping: the provider checks the hook; other: an event that deploys nothing. */
  kind: 'push' | 'pullRequest' | 'ping' | 'other';
  /** The pushed branch or tag name. */
  branch: string | null;
  tag: string | null;
  /** The ref was deleted (nothing to deploy). */
  deleted: boolean;
  commit: string | null;
  message: string | null;
  /** Files the pushed commits added, modified or removed; null when the provider does not say (Bitbucket). */
  paths: string[] | null;
  /** Docker Hub: the pushed image (repository and tag). */
  image: { name: string; tag: string | null } | null;
  /** A pull request event: what it says (kind pullRequest only). */
  pullRequest?: PullRequestEvent;
}

/**
 * A pull request opened, updated or closed, as its event says it. Only a signed delivery's event
 * reaches a preview, and the preview still asks the provider's API for the head, base and author.
 */
export interface PullRequestEvent {
  /** opened, reopened, synchronize, closed (every provider's named as GitHub's), else the provider's own (labeled, edited...). */
  action: string;
  /** The provider's id of the pull request and its number in the repository. */
  id: string;
  number: number;
  url: string;
  title: string;
  /** The branch it merges from and its head commit; the branch it merges into. */
  headBranch: string;
  headSha: string | null;
  baseBranch: string;
  /** The base repository (owner/name) and whether the head is in another repository (a fork). */
  repository: string | null;
  fromFork: boolean;
  /** The repository the head branch is in (owner/name, GitLab's whole path): the fork's for a fork, else the base's. */
  headRepository: string | null;
  /** The author as the provider names them: its id (GitLab's user id, Bitbucket's uuid) and login (user name); what a write-access check asks about. */
  author: { id: string | null; login: string | null };
  labels: string[];
}

const header = (h: Headers, name: string): string | null => {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s ? s : null;
};
// A NUL or an unpaired surrogate in a string of the body is read as U+FFFD (core's storable): the
// delivery log can hold it, and no branch, commit or image name matches it.
const str = (v: unknown): string | null => (typeof v === 'string' && v ? storable(v) : null);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const idOf = (v: unknown): string | null => (typeof v === 'number' ? String(v) : str(v));

/** Gitea also sends GitHub's headers: its own are looked at first. */
export function providerOf(h: Headers, body: Record<string, unknown>): Provider {
  if (header(h, 'x-gitea-event')) return 'gitea';
  if (header(h, 'x-github-event')) return 'github';
  if (header(h, 'x-gitlab-event')) return 'gitlab';
  if (header(h, 'x-event-key')) return 'bitbucket';
  if (obj(body.push_data).tag !== undefined && str(obj(body.repository).repo_name)) return 'dockerhub';
  return 'generic';
}

function refParts(ref: string | null): { branch: string | null; tag: string | null } {
  if (ref?.startsWith('refs/heads/')) return { branch: ref.slice(11), tag: null };
  if (ref?.startsWith('refs/tags/')) return { branch: null, tag: ref.slice(10) };
  return { branch: null, tag: null };
}

/** The files GitHub's, Gitea's and GitLab's commits list as added, modified or removed. */
function commitPaths(commits: unknown[]): string[] {
  return commits.flatMap(c => ['added', 'modified', 'removed'].flatMap(k => arr(obj(c)[k]).filter((p): p is string => typeof p === 'string')));
}

export function readDelivery(h: Headers, body: Record<string, unknown>): Delivery {
  const provider = providerOf(h, body);
  const none = { branch: null, tag: null, deleted: false, commit: null, message: null, paths: null, image: null };
  switch (provider) {
    case 'github':
    case 'gitea': {
      const event = header(h, provider === 'gitea' ? 'x-gitea-event' : 'x-github-event')!;
      const deliveryId = header(h, provider === 'gitea' ? 'x-gitea-delivery' : 'x-github-delivery');
      if (event === 'ping') return { provider, event, deliveryId, kind: 'ping', ...none };
      if (event === 'pull_request') return githubPullRequest(provider, event, deliveryId, body);
      if (event !== 'push') return { provider, event, deliveryId, kind: 'other', ...none };
      const head = obj(body.head_commit);
      const commits = arr(body.commits);
      const last = obj(commits.at(-1));
      return {
        provider,
        event,
        deliveryId,
        kind: 'push',
        ...refParts(str(body.ref)),
        deleted: body.deleted === true,
        commit: str(head.id) ?? str(body.after),
        message: str(head.message) ?? str(last.message),
        paths: commitPaths(commits),
        image: null,
      };
    }
    case 'gitlab': {
      const event = header(h, 'x-gitlab-event')!;
      // The signing token's webhook-id, else the id GitLab gives each event.
      const deliveryId = header(h, 'webhook-id') ?? header(h, 'x-gitlab-event-uuid');
      if (event === 'Merge Request Hook' && body.object_kind === 'merge_request') return gitlabMergeRequest(event, deliveryId, body);
      if (event !== 'Push Hook' && event !== 'Tag Push Hook' && event !== 'System Hook') return { provider, event, deliveryId, kind: 'other', ...none };
      if (body.object_kind !== 'push' && body.object_kind !== 'tag_push') return { provider, event, deliveryId, kind: 'other', ...none };
      const commits = arr(body.commits);
      const sha = str(body.checkout_sha) ?? str(body.after);
      const head = obj(commits.find(c => obj(c).id === sha) ?? commits.at(-1));
      return {
        provider,
        event,
        deliveryId,
        kind: 'push',
        ...refParts(str(body.ref)),
        // GitLab's after is all zeros when the ref was deleted.
        deleted: /^0+$/.test(str(body.after) ?? '') || body.checkout_sha === null,
        commit: sha,
        message: str(head.message),
        paths: commitPaths(commits),
        image: null,
      };
    }
    case 'bitbucket': {
      const event = header(h, 'x-event-key')!;
      const deliveryId = header(h, 'x-request-uuid');
      if (event === 'diagnostics:ping') return { provider, event, deliveryId, kind: 'ping', ...none };
      if (event.startsWith('pullrequest:')) return bitbucketPullRequest(event, deliveryId, body);
      if (event !== 'repo:push') return { provider, event, deliveryId, kind: 'other', ...none };
      const change = obj(arr(obj(body.push).changes)[0]);
      const next = obj(change.new);
      const target = obj(next.target);
      const name = str(next.name);
      return {
        provider,
        event,
        deliveryId,
        kind: 'push',
        branch: next.type === 'branch' ? name : null,
        tag: next.type === 'tag' || next.type === 'annotated_tag' ? name : null,
        deleted: change.new === null || change.closed === true,
        commit: str(target.hash),
        message: str(target.message),
        // Bitbucket's push lists no files (the peer asks its API for them): watchPaths are not checked.
        paths: null,
        image: null,
      };
    }
    case 'dockerhub': {
      const repo = obj(body.repository);
      return { provider, event: 'push', deliveryId: null, kind: 'push', ...none, image: { name: str(repo.repo_name)!, tag: str(obj(body.push_data).tag) } };
    }
    default:
      // A plain POST (a CI step, curl): a push of whatever the workload watches, as the peer takes it.
      return { provider, event: 'push', deliveryId: header(h, 'webhook-id'), kind: 'push', ...none, ...refParts(str(body.ref)), commit: str(body.after), paths: null };
  }
}

/** GitHub's (and Gitea's) pull_request event: the pull request, its head and base, its author and labels (author_association is not read: the provider's API says who may push). */
function githubPullRequest(provider: Provider, event: string, deliveryId: string | null, body: Record<string, unknown>): Delivery {
  const pr = obj(body.pull_request);
  const head = obj(pr.head);
  const base = obj(pr.base);
  const headRepo = str(obj(head.repo).full_name);
  const baseRepo = str(obj(base.repo).full_name) ?? str(obj(body.repository).full_name);
  const number = typeof pr.number === 'number' ? pr.number : typeof body.number === 'number' ? body.number : 0;
  return pullRequestDelivery(provider, event, deliveryId, {
    action: giteaAction(str(body.action) ?? ''),
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

const equal = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};
const hmacHex = (secret: string | Buffer, body: Buffer) => createHmac('sha256', secret).update(body).digest('hex');

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * Checks a delivery against the workload's secret, by its provider's scheme: GitHub
 * X-Hub-Signature-256, Gitea X-Gitea-Signature, Bitbucket X-Hub-Signature (HMAC-SHA256 of the
 * body), GitLab X-Gitlab-Token (the secret itself) or its signing token (Standard Webhooks:
 * webhook-id, webhook-timestamp, webhook-signature, the timestamp no older than the tolerance).
 * Any client can sign the Standard Webhooks way or send X-Hub-Signature-256.
 */
export function checkSignature(h: Headers, raw: Buffer, provider: Provider, secret: string, toleranceSeconds: number, nowMs = Date.now()): SignatureCheck {
  const standard = header(h, 'webhook-signature');
  if (standard) return checkStandard(h, raw, secret, standard, toleranceSeconds, nowMs);
  const hub = (name: string, prefix: string): SignatureCheck | null => {
    const sent = header(h, name);
    if (!sent) return null;
    return equal(sent, `${prefix}${hmacHex(secret, raw)}`) ? { ok: true } : { ok: false, reason: `bad signature: ${name} does not match the body signed with the webhook secret` };
  };
  const found =
    provider === 'gitea'
      ? (hub('x-gitea-signature', '') ?? hub('x-hub-signature-256', 'sha256='))
      : provider === 'bitbucket'
        ? (hub('x-hub-signature', 'sha256=') ?? hub('x-hub-signature-256', 'sha256='))
        : hub('x-hub-signature-256', 'sha256=');
  if (found) return found;
  const token = header(h, 'x-gitlab-token');
  if (token) return equal(token, secret) ? { ok: true } : { ok: false, reason: 'bad signature: X-Gitlab-Token is not the webhook secret' };
  return { ok: false, reason: `missing signature: the workload has a webhook secret and the delivery carries no ${expectedHeader(provider)}` };
}

const expectedHeader = (p: Provider) =>
  ({ github: 'X-Hub-Signature-256', gitea: 'X-Gitea-Signature', bitbucket: 'X-Hub-Signature', gitlab: 'X-Gitlab-Token or webhook-signature' })[p as string] ??
  'X-Hub-Signature-256 or webhook-signature';

/** Standard Webhooks: HMAC-SHA256 of `id.timestamp.body` with the secret (whsec_ + base64 key), base64, as `v1,<sig>` (space-separated, any may match). */
function checkStandard(h: Headers, raw: Buffer, secret: string, sent: string, toleranceSeconds: number, nowMs: number): SignatureCheck {
  const id = header(h, 'webhook-id');
  const timestamp = header(h, 'webhook-timestamp');
  if (!id || !timestamp || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'bad signature: webhook-signature needs webhook-id and a numeric webhook-timestamp' };
  const age = Math.abs(nowMs / 1000 - Number(timestamp));
  if (age > toleranceSeconds) return { ok: false, reason: `stale delivery: webhook-timestamp is ${Math.round(age)} s away from now (tolerance ${toleranceSeconds} s)` };
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(raw).digest('base64');
  const ok = sent.split(' ').some(s => s.startsWith('v1,') && equal(s.slice(3), expected));
  return ok ? { ok: true } : { ok: false, reason: 'bad signature: no webhook-signature matches the body signed with the webhook secret' };
}
