// GitHub's webhook deliveries (a repository's hook, or the App's): X-GitHub-Event names the event
// and X-GitHub-Delivery its id; pushes, pull requests and pings are read as GitHub sends them,
// signed with X-Hub-Signature-256 (HMAC-SHA256 of the body). The App's deliveries name their
// installation and repository (`app`).
import type { GitDeliveryReader } from '@berth/core';
import { header, hmacSignature, obj, readGithubShaped, str } from '@berth/provider-git-kit';

export const githubDeliveries: GitDeliveryReader = {
  eventHeader: 'x-github-event',
  signatureHeader: 'X-Hub-Signature-256',
  read: (h, body) => readGithubShaped(header(h, 'x-github-event') ?? '', header(h, 'x-github-delivery'), body),
  verify: (h, raw, secret) => hmacSignature(h, raw, secret, 'x-hub-signature-256', 'sha256='),
  // The App's deliveries: installation.id names the installation; the App's ping names its App (hook.app_id) instead.
  app: {
    installationField: 'installation.id',
    origin: (body, delivery) => ({ installationId: numericId(obj(body.installation).id), appId: delivery.kind === 'ping' ? numericId(obj(body.hook).app_id) : null }),
    repository: body => str(obj(body.repository).full_name),
  },
};

/** A positive integer id, as a number or its digits (GitHub's installation and App ids); null otherwise. */
const numericId = (v: unknown): string | null => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? String(v) : typeof v === 'string' && /^\d{1,20}$/.test(v) ? v : null);
