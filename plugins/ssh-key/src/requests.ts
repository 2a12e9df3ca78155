// sshKey.*: the keys of the caller's organization — stored from a matching pair (the private key
// sealed), one, all, changed, removed, and a new pair made but not stored. Request-scoped: the
// caller's organization and the request's transaction come from the container.
import { invalidField, newId, parseField, RequestScope } from '@berth/core';
import { SshKey } from './entities.ts';
import { generateSshKeyPair, keysMatch, parsePrivateKey, parsePublicKey, type SshKeyType } from './keys.ts';
import type { CreateInput, GeneratedKeyPair, SshKeyView, UpdateInput } from './schemas.ts';
import { toView } from './service.ts';

/** Registered asClass(...).scoped() as `sshKeyRequests`; other plugins use the singleton `sshKeys` vault. */
export class SshKeyRequests extends RequestScope {
  /** Stores a matching key pair; the private key sealed. */
  async create(input: CreateInput): Promise<SshKeyView> {
    const privateKey = parseField('privateKey', () => parsePrivateKey(input.privateKey));
    const publicBlob = parseField('publicKey', () => parsePublicKey(input.publicKey));
    if (!keysMatch(privateKey, publicBlob)) throw invalidField('privateKey', 'does not match the public key');
    const row = this.em.create(SshKey, {
      sshKeyId: newId(),
      name: input.name,
      description: input.description ?? null,
      publicKey: input.publicKey.trim(),
      privateKey: this.cradle.secrets.encrypt(input.privateKey.trim() + '\n'),
      organizationId: this.organizationId,
      lastUsedAt: null,
      createdAt: new Date(),
    });
    await this.em.flush();
    return toView(row);
  }

  /** A key without its private key. */
  one(sshKeyId: string): Promise<SshKeyView> {
    return this.cradle.sshKeys.one(sshKeyId, this.organizationId, this.em);
  }

  /** Newest first. */
  async all(): Promise<SshKeyView[]> {
    const rows = await this.em.find(SshKey, { organizationId: this.organizationId }, { orderBy: { createdAt: 'desc', sshKeyId: 'asc' } });
    return rows.map(toView);
  }

  /** Changes a key's name, description or last-used time. */
  async update(input: UpdateInput): Promise<SshKeyView> {
    const row = await this.#find(input.sshKeyId);
    if (input.name !== undefined) row.name = input.name;
    if (input.description !== undefined) row.description = input.description;
    // "" is not set (the empty-string rule): a timestamp column keeps null for it.
    if (input.lastUsedAt !== undefined) row.lastUsedAt = input.lastUsedAt ? new Date(input.lastUsedAt) : null;
    await this.em.flush();
    return toView(row);
  }

  /** Deletes the key; answers it as it was. */
  async remove(sshKeyId: string): Promise<SshKeyView> {
    const view = toView(await this.#find(sshKeyId));
    await this.em.nativeDelete(SshKey, { sshKeyId, organizationId: this.organizationId });
    return view;
  }

  /** One of the organization's keys (NOT_FOUND otherwise: another organization's is never FORBIDDEN). */
  #find(sshKeyId: string) {
    return this.owned(SshKey, { sshKeyId }, 'SSH key');
  }

  /** A new key pair, not stored: the client shows it and calls create, as with the peer. */
  generate(type: SshKeyType): Promise<GeneratedKeyPair> {
    return generateSshKeyPair(type);
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** sshKey.* for the current request's caller (request scope only). */
    sshKeyRequests: SshKeyRequests;
  }
}
