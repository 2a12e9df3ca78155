// An SSH key pair of one organization. The private key is stored sealed (SecretBox), never in plain text.
import { defineEntity, p, newId } from '@berth/core';

export const SshKey = defineEntity({
  name: 'SshKey',
  tableName: 'ssh_keys',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    sshKeyId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    name: p.string(),
    description: p.text().nullable(),
    /** One OpenSSH public key line: `ssh-ed25519 AAAA… [comment]`. */
    publicKey: p.text(),
    /** The private key as SecretBox.encrypt sealed it (`v1:…`). */
    privateKey: p.text(),
    organizationId: p.string().length(32),
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type SshKeyRow = InstanceType<typeof SshKey.class>;
export const sshKeyEntities = [SshKey];
