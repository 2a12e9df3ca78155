// An organization's default SSH private key (settings.saveSSHPrivateKey): what its servers with no
// key of their own (sshKeyId null) connect with. Stored sealed (SecretBox), never in plain text.
import { columns, defineEntity, p } from '@berth/core';

export const DefaultSshKey = defineEntity({
  name: 'DefaultSshKey',
  tableName: 'default_ssh_keys',
  properties: {
    organizationId: columns.berthId().primary(),
    /** The private key as SecretBox.encrypt sealed it (`v1:…`). */
    privateKey: p.text(),
    createdAt: p.datetime(),
  },
});

export const hostsEntities = [DefaultSshKey];
