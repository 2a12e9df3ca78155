// What the ssh-key plugin offers others: the private key of a stored key pair, for git
// clones and (later) remote servers. Never answered over the API after creation.
import type { EntityManager } from '@mikro-orm/postgresql';
import Type, { type Static } from 'typebox';
import { Nullable, Timestamp } from '../schema.ts';

/** Registered as `sshKeys` by the ssh-key plugin. */
export interface SshKeyVault {
  /** The unsealed private key (OpenSSH or PEM text); NOT_FOUND for another organization's key. Marks the key used. */
  privateKey(sshKeyId: string, organizationId: string, em: EntityManager): Promise<string>;
  /** The key as sshKey.one answers it (no private key); NOT_FOUND for another organization's key. */
  one(sshKeyId: string, organizationId: string, em: EntityManager): Promise<SshKeySummary>;
}

/** A stored key without its private half: as sshKey.* answers it, and server.one joins it. */
export const SshKeySummary = Type.Object({
  sshKeyId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  publicKey: Type.String(),
  organizationId: Type.String(),
  lastUsedAt: Nullable(Timestamp()),
  createdAt: Timestamp(),
});
export type SshKeySummary = Static<typeof SshKeySummary>;

declare module '../container.ts' {
  interface Cradle {
    /** From the ssh-key plugin. */
    sshKeys: SshKeyVault;
  }
}
