// SSH keys of the organization, and what other plugins (git, servers) use to get a private
// key. A record of another organization is NOT_FOUND, never FORBIDDEN.
import { iso, invalidField, newId, notFound, type Cradle, type EntityManager, type SecretBox, type SshKeyVault } from '@berth/core';
import { SshKey, type SshKeyRow } from './entities.ts';
import { generateSshKeyPair, keysMatch, parsePrivateKey, parsePublicKey, type SshKeyType } from './keys.ts';
import type { CreateInput, GeneratedKeyPair, SshKeyView, UpdateInput } from './schemas.ts';

const toView = (k: SshKeyRow): SshKeyView => ({
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

  // ------------------------------------------------------------ sshKey.*
  async create(input: CreateInput, organizationId: string, em: EntityManager): Promise<SshKeyView> {
    const privateKey = attempt('privateKey', () => parsePrivateKey(input.privateKey));
    const publicBlob = attempt('publicKey', () => parsePublicKey(input.publicKey));
    if (!keysMatch(privateKey, publicBlob)) throw invalidField('privateKey', 'does not match the public key');
    const row = em.create(SshKey, {
      sshKeyId: newId(),
      name: input.name,
      description: input.description ?? null,
      publicKey: input.publicKey.trim(),
      privateKey: this.#secrets().encrypt(input.privateKey.trim() + '\n'),
      organizationId,
      lastUsedAt: null,
      createdAt: new Date(),
    });
    await em.flush();
    return toView(row);
  }

  async one(sshKeyId: string, organizationId: string, em: EntityManager): Promise<SshKeyView> {
    return toView(await this.#find(sshKeyId, organizationId, em));
  }

  /** Newest first. */
  async all(organizationId: string, em: EntityManager): Promise<SshKeyView[]> {
    const rows = await em.find(SshKey, { organizationId }, { orderBy: { createdAt: 'desc', sshKeyId: 'asc' } });
    return rows.map(toView);
  }

  async update(input: UpdateInput, organizationId: string, em: EntityManager): Promise<SshKeyView> {
    const row = await this.#find(input.sshKeyId, organizationId, em);
    if (input.name !== undefined) row.name = input.name;
    if (input.description !== undefined) row.description = input.description;
    // "" is not set (the empty-string rule): a timestamp column keeps null for it.
    if (input.lastUsedAt !== undefined) row.lastUsedAt = input.lastUsedAt ? new Date(input.lastUsedAt) : null;
    await em.flush();
    return toView(row);
  }

  /** Deletes the key; answers it as it was. */
  async remove(sshKeyId: string, organizationId: string, em: EntityManager): Promise<SshKeyView> {
    const view = toView(await this.#find(sshKeyId, organizationId, em));
    await em.nativeDelete(SshKey, { sshKeyId, organizationId });
    return view;
  }

  /** A new key pair, not stored: the client shows it and calls create, as with the peer. */
  generate(type: SshKeyType): Promise<GeneratedKeyPair> {
    return generateSshKeyPair(type);
  }

  async #find(sshKeyId: string, organizationId: string, em: EntityManager): Promise<SshKeyRow> {
    const row = await em.findOne(SshKey, { sshKeyId, organizationId });
    if (!row) throw notFound('SSH key');
    return row;
  }
}

/** Runs a parse, turning its failure into a 400 that names the field. */
function attempt<T>(field: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw invalidField(field, (e as Error).message);
  }
}

/**
 * sshKey.* for one request: the service confined to the caller's organization and the
 * request's unit of work. Registered request-scoped as `callerSshKeys`; other plugins keep
 * using the singleton `sshKeys` vault.
 */
export const callerSshKeys =
  (keys: SshKeyService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      /** Stores a matching key pair. */
      create: (input: CreateInput) => keys.create(input, organizationId, em),
      /** A key without its private key. */
      one: (sshKeyId: string) => keys.one(sshKeyId, organizationId, em),
      /** Every key, newest first. */
      all: () => keys.all(organizationId, em),
      /** Changes a key's name, description or last-used time. */
      update: (input: UpdateInput) => keys.update(input, organizationId, em),
      /** Deletes a key. */
      remove: (sshKeyId: string) => keys.remove(sshKeyId, organizationId, em),
      /** A new key pair, not stored. */
      generate: (type: SshKeyType) => keys.generate(type),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** sshKey.* for the current request's caller (request scope only). */
    callerSshKeys: ReturnType<ReturnType<typeof callerSshKeys>>;
  }
}
