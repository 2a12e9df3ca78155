// What a delivery says, read the same way whoever sent it: a forge (any enabled git provider that
// reads its own deliveries, recognised by its event header), Docker Hub (its push_data), or a
// plain POST (a CI step, curl). And whether it is signed with the workload's secret: the Standard
// Webhooks way or X-Hub-Signature-256 for anyone, else by the forge's own scheme, compared in
// constant time. No forge is named here: each one's reading is in its provider.
import { createHmac } from 'node:crypto';
import type { DeliveryHeaders, GitDelivery, GitProvider, SignatureCheck } from '@berth/core';
import { equalText, header, hmacSignature, obj, refParts, str } from '@berth/provider-git-kit';

export interface Delivery extends GitDelivery {
  /** Who sent it: the forge's provider id, "dockerhub", or "generic" (a plain POST). */
  provider: string;
  /** Docker Hub: the pushed image (repository and tag). */
  image: { name: string; tag: string | null } | null;
  /** The forge that sent it (null for Docker Hub and a plain POST). */
  forge: GitProvider | null;
}

/** The forge whose event header the delivery carries; of two, the one that imitates the other (Gitea sends GitHub's headers too). */
export function forgeOf(h: DeliveryHeaders, forges: readonly GitProvider[]): GitProvider | null {
  const present = forges.filter(f => f.deliveries && header(h, f.deliveries.eventHeader));
  return present.find(f => present.some(o => o !== f && f.deliveries!.imitates?.includes(o.id))) ?? present[0] ?? null;
}

export function readDelivery(h: DeliveryHeaders, body: Record<string, unknown>, forges: readonly GitProvider[]): Delivery {
  const forge = forgeOf(h, forges);
  if (forge) return { ...forge.deliveries!.read(h, body), provider: forge.id, image: null, forge };
  const none = { tag: null, deleted: false, message: null, paths: null, forge: null };
  if (obj(body.push_data).tag !== undefined && str(obj(body.repository).repo_name)) {
    const repo = obj(body.repository);
    return { provider: 'dockerhub', event: 'push', deliveryId: null, kind: 'push', ...none, branch: null, commit: null, image: { name: str(repo.repo_name)!, tag: str(obj(body.push_data).tag) } };
  }
  // A plain POST: a push of whatever the workload watches, as the peer takes it.
  return { provider: 'generic', event: 'push', deliveryId: header(h, 'webhook-id'), kind: 'push', ...none, ...refParts(str(body.ref)), commit: str(body.after), image: null };
}

/**
 * Checks a delivery against the workload's secret: the Standard Webhooks way (webhook-id,
 * webhook-timestamp, webhook-signature, the timestamp no older than the tolerance; GitLab's signing
 * tokens sign so), else the forge's own scheme, else X-Hub-Signature-256 (HMAC-SHA256 of the body),
 * which any client may send.
 */
export function checkSignature(h: DeliveryHeaders, raw: Buffer, forge: GitProvider | null, secret: string, toleranceSeconds: number, nowMs = Date.now()): SignatureCheck {
  const standard = header(h, 'webhook-signature');
  if (standard) return checkStandard(h, raw, secret, standard, toleranceSeconds, nowMs);
  const found = forge?.deliveries?.verify(h, raw, secret) ?? hmacSignature(h, raw, secret, 'x-hub-signature-256', 'sha256=');
  if (found) return found;
  const expected = forge?.deliveries?.signatureHeader ?? 'X-Hub-Signature-256 or webhook-signature';
  return { ok: false, reason: `missing signature: the workload has a webhook secret and the delivery carries no ${expected}` };
}

/** Standard Webhooks: HMAC-SHA256 of `id.timestamp.body` with the secret (whsec_ + base64 key), base64, as `v1,<sig>` (space-separated, any may match). */
function checkStandard(h: DeliveryHeaders, raw: Buffer, secret: string, sent: string, toleranceSeconds: number, nowMs: number): SignatureCheck {
  const id = header(h, 'webhook-id');
  const timestamp = header(h, 'webhook-timestamp');
  if (!id || !timestamp || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'bad signature: webhook-signature needs webhook-id and a numeric webhook-timestamp' };
  const age = Math.abs(nowMs / 1000 - Number(timestamp));
  if (age > toleranceSeconds) return { ok: false, reason: `stale delivery: webhook-timestamp is ${Math.round(age)} s away from now (tolerance ${toleranceSeconds} s)` };
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(raw).digest('base64');
  const ok = sent.split(' ').some(s => s.startsWith('v1,') && equalText(s.slice(3), expected));
  return ok ? { ok: true } : { ok: false, reason: 'bad signature: no webhook-signature matches the body signed with the webhook secret' };
}
