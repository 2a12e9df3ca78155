// The host key as OpenSSH shows it, and the error a changed key raises.
import { createHash } from 'node:crypto';
import { BerthError } from '@berth/core';

/** OpenSSH's SHA-256 fingerprint of a host key blob: `SHA256:` and the digest in base64 without padding. */
export function hostKeyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The server presented another host key than the pinned one: nothing was sent to it (CONFLICT). */
export class HostKeyChangedError extends BerthError {
  /** The pinned fingerprint. */
  readonly expected: string;
  /** The fingerprint the server presented. */
  readonly presented: string;
  constructor(target: string, expected: string, presented: string) {
    super(
      'CONFLICT',
      `The host key of ${target} changed: pinned ${expected}, presented ${presented}. ` +
        `If the server was reinstalled or its key replaced on purpose, accept the new key by pinning its fingerprint: server.update with hostKeyFingerprint "${presented}".`,
    );
    this.name = 'HostKeyChangedError';
    this.expected = expected;
    this.presented = presented;
  }
}
