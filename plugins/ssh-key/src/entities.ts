// An SSH key pair of one organization. The private key is stored sealed (SecretBox), never in plain text.
import { columns, defineEntity, p } from '@berth/core';

export const SshKey = defineEntity({
  name: 'SshKey',
  tableName: 'ssh_keys',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    sshKeyId: columns.primaryId(),
    name: p.string(),
    description: p.text().nullable(),
    /** One OpenSSH public key line: `ssh-ed25519 AAAA… [comment]`. */
    publicKey: p.text(),
    /** The private key as SecretBox.encrypt sealed it (`v1:…`). */
    privateKey: p.text(),
    organizationId: columns.berthId(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: columns.createdAt(),
  },
});

export type SshKeyRow = InstanceType<typeof SshKey.class>;
export const sshKeyEntities = [SshKey];
