// A container registry of one organization. The password is stored sealed (SecretBox), never in plain text.
import { columns, defineEntity, p } from '@berth/core';

export const Registry = defineEntity({
  name: 'Registry',
  tableName: 'registries',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    registryId: columns.primaryId(),
    registryName: p.string(),
    imagePrefix: p.string().nullable(),
    username: p.string(),
    /** The password as SecretBox.encrypt sealed it (`v1:…`). */
    password: p.text(),
    /** host[:port]; "" is Docker Hub. */
    registryUrl: p.string(),
    registryType: p.string().length(16),
    organizationId: columns.berthId(),
    /** Berth runs this registry's service (registry.enableSelfHostedRegistry made it). */
    runsService: p.boolean().default(false),
    /** Where that service and its route are: a server; null: this machine (or Berth runs none). */
    serverId: columns.berthId().nullable(),
    createdAt: columns.createdAt(),
  },
});

export type RegistryRow = InstanceType<typeof Registry.class>;
export const registryEntities = [Registry];
