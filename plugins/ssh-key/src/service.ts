// SSH keys as other plugins (git, servers) use them: one of an organization's keys, and its private
// key. A record of another organization is NOT_FOUND, never FORBIDDEN. sshKey.* is requests.ts.
import { iso, type EntityManager, type SecretBox, type SshKeyVault, findOwned } from '@berth/core';
import { SshKey, type SshKeyRow } from './entities.ts';
import type { SshKeyView } from './schemas.ts';

export const toView = (k: SshKeyRow): SshKeyView => ({
  sshKeyId: k.sshKeyId,
  name: k.name,
  description: k.description ?? null,
  publicKey: k.publicKey,
  organizationId: k.organizationId,
  lastUsedAt: iso(k.lastUsedAt ?? null),
  createdAt: iso(k.createdAt)!,
});

export class SshKeyService implements SshKeyVault {
  /** Resolved on use: the kernel's SecretBox. */
  readonly #secrets: () => SecretBox;

  constructor(secrets: () => SecretBox) {
    this.#secrets = secrets;
  }

  // ------------------------------------------------------------ for other plugins
  /** The decrypted private key (PEM or OpenSSH text, as it was given) of one of the organization's keys; marks it used. */
  async privateKey(sshKeyId: string, organizationId: string, em: EntityManager): Promise<string> {
    const row = await this.#find(sshKeyId, organizationId, em);
    row.lastUsedAt = new Date();
    await em.flush();
    return this.#secrets().decrypt(row.privateKey);
  }

  /** One of the organization's keys, without its private key (NOT_FOUND otherwise). */
  async one(sshKeyId: string, organizationId: string, em: EntityManager): Promise<SshKeyView> {
    return toView(await this.#find(sshKeyId, organizationId, em));
  }

  #find(sshKeyId: string, organizationId: string, em: EntityManager): Promise<SshKeyRow> {
    return findOwned(em, SshKey, { sshKeyId }, organizationId, 'SSH key');
  }
}
