// GitHub's webhook deliveries (a repository's hook, or the App's): X-GitHub-Event names the event
// and X-GitHub-Delivery its id; pushes, pull requests and pings are read as GitHub sends them,
// signed with X-Hub-Signature-256 (HMAC-SHA256 of the body).
import type { GitDeliveryReader } from '@berth/core';
import { header, hmacSignature, readGithubShaped } from '@berth/provider-git-kit';

export const githubDeliveries: GitDeliveryReader = {
  eventHeader: 'x-github-event',
  signatureHeader: 'X-Hub-Signature-256',
  read: (h, body) => readGithubShaped(header(h, 'x-github-event') ?? '', header(h, 'x-github-delivery'), body),
  verify: (h, raw, secret) => hmacSignature(h, raw, secret, 'x-hub-signature-256', 'sha256='),
};
