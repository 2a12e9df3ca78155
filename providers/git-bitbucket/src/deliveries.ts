// Bitbucket Cloud's webhook deliveries: X-Event-Key names the event (repo:push, pullrequest:*,
// diagnostics:ping) and X-Request-UUID the delivery. A push names its change's new branch or tag
// and head commit, but no files (the peer asks the API for them: watchPaths are not checked).
// Signed with X-Hub-Signature (sha256= and HMAC-SHA256 of the body), or X-Hub-Signature-256.
import { storable, type GitDelivery, type GitDeliveryReader } from '@berth/core';
import { arr, eventOnly, header, hmacSignature, num, obj, pullRequestDelivery, str } from '@berth/provider-git-kit';

function read(event: string, deliveryId: string | null, body: Record<string, unknown>): GitDelivery {
  if (event === 'diagnostics:ping') return eventOnly(event, deliveryId, 'ping');
  if (event.startsWith('pullrequest:')) return pullRequest(event, deliveryId, body);
  if (event !== 'repo:push') return eventOnly(event, deliveryId, 'other');
  const change = obj(arr(obj(body.push).changes)[0]);
  const next = obj(change.new);
  const target = obj(next.target);
  const name = str(next.name);
  return {
    event,
    deliveryId,
    kind: 'push',
    branch: next.type === 'branch' ? name : null,
    tag: next.type === 'tag' || next.type === 'annotated_tag' ? name : null,
    deleted: change.new === null || change.closed === true,
    commit: str(target.hash),
    message: str(target.message),
    paths: null,
  };
}

/** pullrequest:created, :updated (a push or an edit: redeployed), :fulfilled (merged) and :rejected (declined). */
function pullRequest(event: string, deliveryId: string | null, body: Record<string, unknown>): GitDelivery {
  const pr = obj(body.pullrequest);
  const source = obj(pr.source);
  const destination = obj(pr.destination);
  const kind = event.slice('pullrequest:'.length);
  const action = { created: 'opened', updated: 'synchronize', fulfilled: 'closed', rejected: 'closed' }[kind] ?? kind;
  const author = obj(pr.author);
  const headRepo = str(obj(source.repository).full_name);
  const baseRepo = str(obj(destination.repository).full_name) ?? str(obj(body.repository).full_name);
  return pullRequestDelivery(event, deliveryId, {
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

export const bitbucketDeliveries: GitDeliveryReader = {
  eventHeader: 'x-event-key',
  signatureHeader: 'X-Hub-Signature',
  read: (h, body) => read(header(h, 'x-event-key') ?? '', header(h, 'x-request-uuid'), body),
  verify: (h, raw, secret) => hmacSignature(h, raw, secret, 'x-hub-signature', 'sha256=') ?? hmacSignature(h, raw, secret, 'x-hub-signature-256', 'sha256='),
};
