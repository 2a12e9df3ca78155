// Each organization's default SSH private key (settings.saveSSHPrivateKey): its servers whose
// record names no key (sshKeyId null) connect with it. The peer keeps one per instance; Berth
// keeps one per organization so that a server record of one organization can never log in with a
// key another organization's hosts trust. Sealed at rest; checked before it is stored (a PEM or
// OpenSSH private key without passphrase), so a bad key fails at save, not at the next connection.
import { createPrivateKey } from 'node:crypto';
import { invalidField, type Cradle, type EntityManager } from '@berth/core';
import { DefaultSshKey } from './entities.ts';

const BLOCK = /^-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----\r?\n([\s\S]+?)\r?\n-----END \1PRIVATE KEY-----$/;
const OPENSSH_MAGIC = Buffer.from('openssh-key-v1\0');

/** The key as it is stored (trimmed, one final newline), or a 400 naming sshPrivateKey. */
export function checkedPrivateKey(text: string): string {
  const key = text.trim();
  const m = BLOCK.exec(key);
  if (!m) throw invalidField('sshPrivateKey', 'is not a private key: a PEM (PKCS#8, PKCS#1) or OpenSSH block from -----BEGIN … PRIVATE KEY----- to -----END … PRIVATE KEY-----');
  if (m[1] === 'OPENSSH ') {
    const blob = Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64');
    if (blob.length < 23 || !blob.subarray(0, OPENSSH_MAGIC.length).equals(OPENSSH_MAGIC)) throw invalidField('sshPrivateKey', 'is not an OpenSSH private key (its content is damaged)');
    const cipherLength = blob.readUInt32BE(OPENSSH_MAGIC.length);
    if (blob.subarray(OPENSSH_MAGIC.length + 4, OPENSSH_MAGIC.length + 4 + cipherLength).toString() !== 'none') {
      throw invalidField('sshPrivateKey', 'is protected by a passphrase: Berth connects unattended, save a key without one');
    }
  } else {
    try {
      createPrivateKey(key);
    } catch (e) {
      const encrypted = /ENCRYPTED|passphrase/i.test(m[1]! + (e as Error).message);
      throw invalidField('sshPrivateKey', encrypted ? 'is protected by a passphrase: Berth connects unattended, save a key without one' : 'is not a private key Berth can read');
    }
  }
  return `${key}\n`;
}

export class DefaultSshKeys {
  readonly #cradle: () => Cradle;
  readonly #changed: (organizationId: string) => Promise<void>;

  /** changed: called after an organization's key was saved or removed (its servers' pooled connections are closed). */
  constructor(cradle: () => Cradle, changed: (organizationId: string) => Promise<void>) {
    this.#cradle = cradle;
    this.#changed = changed;
  }

  /** Stores (sealed) the organization's default key, replacing the one before. */
  async save(organizationId: string, privateKey: string, em: EntityManager): Promise<void> {
    const sealed = this.#cradle().secrets.encrypt(checkedPrivateKey(privateKey));
    await em.upsert(DefaultSshKey, { organizationId, privateKey: sealed, createdAt: new Date() });
    await this.#changed(organizationId);
  }

  /** Removes the organization's default key (nothing when it has none). */
  async clean(organizationId: string, em: EntityManager): Promise<void> {
    await em.nativeDelete(DefaultSshKey, { organizationId });
    await this.#changed(organizationId);
  }

  /** The organization's default key, unsealed (held in memory only); null when it has none. */
  async privateKey(organizationId: string): Promise<string | null> {
    const row = await this.#cradle().orm.em.fork().findOne(DefaultSshKey, { organizationId });
    return row ? this.#cradle().secrets.decrypt(row.privateKey) : null;
  }

  /** Whether the organization has a default key. */
  async has(organizationId: string): Promise<boolean> {
    return (await this.#cradle().orm.em.fork().count(DefaultSshKey, { organizationId })) > 0;
  }
}
