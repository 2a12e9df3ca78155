// Gitea's webhook deliveries: X-Gitea-Event and X-Gitea-Delivery, and GitHub's headers beside them
// (so they are Gitea's when both are there); the push and pull_request events in GitHub's shape,
// with "synchronized" where GitHub says "synchronize". Signed with X-Gitea-Signature (HMAC-SHA256
// of the body, hex without a prefix), or GitHub's X-Hub-Signature-256.
import type { GitDeliveryReader } from '@berth/core';
import { header, hmacSignature, readGithubShaped } from '@berth/provider-git-kit';

export const giteaDeliveries: GitDeliveryReader = {
  eventHeader: 'x-gitea-event',
  imitates: ['github'],
  signatureHeader: 'X-Gitea-Signature',
  read: (h, body) => readGithubShaped(header(h, 'x-gitea-event') ?? '', header(h, 'x-gitea-delivery'), body, action => (action === 'synchronized' ? 'synchronize' : action)),
  verify: (h, raw, secret) => hmacSignature(h, raw, secret, 'x-gitea-signature', '') ?? hmacSignature(h, raw, secret, 'x-hub-signature-256', 'sha256='),
};
