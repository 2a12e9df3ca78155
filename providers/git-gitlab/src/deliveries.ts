// GitLab's webhook deliveries: X-Gitlab-Event names the event (Push Hook, Tag Push Hook, System
// Hook, Merge Request Hook); the id is the signing token's webhook-id, else X-Gitlab-Event-UUID.
// A push names its checkout commit and the files its commits touched; a deleted ref has an
// all-zero after. A hook's secret token comes back as X-Gitlab-Token (compared in constant time);
// a signing token signs the Standard Webhooks way, which the push hook checks for every forge.
import { storable, type GitDelivery, type GitDeliveryReader } from '@berth/core';
import { arr, commitPaths, equalText, eventOnly, header, num, obj, pullRequestDelivery, refParts, str } from '@berth/provider-git-kit';

function read(event: string, deliveryId: string | null, body: Record<string, unknown>): GitDelivery {
  if (event === 'Merge Request Hook' && body.object_kind === 'merge_request') return mergeRequest(event, deliveryId, body);
  if (event !== 'Push Hook' && event !== 'Tag Push Hook' && event !== 'System Hook') return eventOnly(event, deliveryId, 'other');
  if (body.object_kind !== 'push' && body.object_kind !== 'tag_push') return eventOnly(event, deliveryId, 'other');
  const commits = arr(body.commits);
  const sha = str(body.checkout_sha) ?? str(body.after);
  const head = obj(commits.find(c => obj(c).id === sha) ?? commits.at(-1));
  return {
    event,
    deliveryId,
    kind: 'push',
    ...refParts(str(body.ref)),
    // GitLab's after is all zeros when the ref was deleted.
    deleted: /^0+$/.test(str(body.after) ?? '') || body.checkout_sha === null,
    commit: sha,
    message: str(head.message),
    paths: commitPaths(commits),
  };
}

/**
 * The Merge Request Hook: open, reopen, close, merge, and update — new commits only when it
 * carries `oldrev` (a title or label change does not redeploy).
 */
function mergeRequest(event: string, deliveryId: string | null, body: Record<string, unknown>): GitDelivery {
  const mr = obj(body.object_attributes);
  const raw = str(mr.action) ?? '';
  const action = { open: 'opened', reopen: 'reopened', close: 'closed', merge: 'closed' }[raw] ?? (raw === 'update' && str(mr.oldrev) ? 'synchronize' : raw === 'update' ? 'edited' : raw);
  const source = num(mr.source_project_id);
  const target = num(mr.target_project_id);
  const baseRepo = str(obj(body.project).path_with_namespace) ?? str(obj(mr.target).path_with_namespace);
  const user = obj(body.user);
  const authorId = num(mr.author_id) || num(user.id);
  return pullRequestDelivery(event, deliveryId, {
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

export const gitlabDeliveries: GitDeliveryReader = {
  eventHeader: 'x-gitlab-event',
  signatureHeader: 'X-Gitlab-Token or webhook-signature',
  // The signing token's webhook-id, else the id GitLab gives each event.
  read: (h, body) => read(header(h, 'x-gitlab-event') ?? '', header(h, 'webhook-id') ?? header(h, 'x-gitlab-event-uuid'), body),
  verify: (h, _raw, secret) => {
    const token = header(h, 'x-gitlab-token');
    if (!token) return null;
    return equalText(token, secret) ? { ok: true } : { ok: false, reason: 'bad signature: X-Gitlab-Token is not the webhook secret' };
  },
};
