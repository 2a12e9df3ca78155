// Pull request events of GitLab (Merge Request Hook), Gitea (pull_request) and Bitbucket Cloud
// (pullrequest:*), read into the one PullRequestEvent the preview plugin takes, their actions
// named as GitHub's: opened, reopened, synchronize (new commits), closed (merged or not).
import { storable } from '@berth/core';
import type { Delivery, Provider, PullRequestEvent } from './delivery.ts';

// As delivery.ts reads a string: a NUL or an unpaired surrogate as U+FFFD.
const str = (v: unknown): string | null => (typeof v === 'string' && v ? storable(v) : null);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** A delivery carrying a pull request event. */
export function pullRequestDelivery(provider: Provider, event: string, deliveryId: string | null, pullRequest: PullRequestEvent): Delivery {
  return {
    provider,
    event,
    deliveryId,
    kind: 'pullRequest',
    branch: pullRequest.headBranch || null,
    tag: null,
    deleted: false,
    commit: pullRequest.headSha,
    message: null,
    paths: null,
    image: null,
    pullRequest,
  };
}

/** Gitea says "synchronized" where GitHub says "synchronize"; the rest of its pull_request payload is GitHub's. */
export const giteaAction = (action: string) => (action === 'synchronized' ? 'synchronize' : action);

/**
 * GitLab's Merge Request Hook: open, reopen, close, merge, and update — new commits only when it
 * carries `oldrev` (a title or label change does not redeploy).
 */
export function gitlabMergeRequest(event: string, deliveryId: string | null, body: Record<string, unknown>): Delivery {
  const mr = obj(body.object_attributes);
  const raw = str(mr.action) ?? '';
  const action = { open: 'opened', reopen: 'reopened', close: 'closed', merge: 'closed' }[raw] ?? (raw === 'update' && str(mr.oldrev) ? 'synchronize' : raw === 'update' ? 'edited' : raw);
  const source = num(mr.source_project_id);
  const target = num(mr.target_project_id);
  const baseRepo = str(obj(body.project).path_with_namespace) ?? str(obj(mr.target).path_with_namespace);
  const user = obj(body.user);
  const authorId = num(mr.author_id) || num(user.id);
  return pullRequestDelivery('gitlab', event, deliveryId, {
    action,
    id: storable(String(mr.id ?? '')),
    number: num(mr.iid),
    url: str(mr.url) ?? '',
    title: str(mr.title) ?? '',
    headBranch: str(mr.source_branch) ?? '',
    headSha: str(obj(mr.last_commit).id),
    baseBranch: str(mr.target_branch) ?? '',
    repository: baseRepo,
    fromFork: Boolean(source && target && source !== target),
    headRepository: str(obj(mr.source).path_with_namespace) ?? baseRepo,
    // The merge request's author (author_id); the event's user is who acted, named when it is the author.
    author: { id: authorId ? String(authorId) : null, login: num(user.id) === authorId ? str(user.username) : null },
    labels: arr(body.labels)
      .map(l => str(obj(l).title))
      .filter((l): l is string => l !== null),
  });
}

/** Bitbucket Cloud's pullrequest:created, :updated (a push or an edit: redeployed), :fulfilled (merged) and :rejected (declined). */
export function bitbucketPullRequest(event: string, deliveryId: string | null, body: Record<string, unknown>): Delivery {
  const pr = obj(body.pullrequest);
  const source = obj(pr.source);
  const destination = obj(pr.destination);
  const kind = event.slice('pullrequest:'.length);
  const action = { created: 'opened', updated: 'synchronize', fulfilled: 'closed', rejected: 'closed' }[kind] ?? kind;
  const author = obj(pr.author);
  const headRepo = str(obj(source.repository).full_name);
  const baseRepo = str(obj(destination.repository).full_name) ?? str(obj(body.repository).full_name);
  return pullRequestDelivery('bitbucket', event, deliveryId, {
    action,
    // Bitbucket's pull request id is its number in the repository.
    id: storable(String(pr.id ?? '')),
    number: num(pr.id),
    url: str(obj(obj(pr.links).html).href) ?? '',
    title: str(pr.title) ?? '',
    headBranch: str(obj(source.branch).name) ?? '',
    headSha: str(obj(source.commit).hash),
    baseBranch: str(obj(destination.branch).name) ?? '',
    repository: baseRepo,
    fromFork: Boolean(headRepo && baseRepo && headRepo !== baseRepo),
    headRepository: headRepo ?? baseRepo,
    author: { id: str(author.uuid) ?? str(author.account_id), login: str(author.nickname) ?? str(author.display_name) },
    labels: [],
  });
}
