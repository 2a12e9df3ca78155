// A container registry of one organization. The password is stored sealed (SecretBox), never in plain text.
import { defineEntity, p, newId } from '@berth/core';

export const Registry = defineEntity({
  name: 'Registry',
  tableName: 'registries',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    registryId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    registryName: p.string(),
    imagePrefix: p.string().nullable(),
    username: p.string(),
    /** The password as SecretBox.encrypt sealed it (`v1:…`). */
    password: p.text(),
    /** host[:port]; "" is Docker Hub. */
    registryUrl: p.string(),
    registryType: p.string().length(16),
    organizationId: p.string().length(32),
    /** Berth runs this registry's service (registry.enableSelfHostedRegistry made it). */
    runsService: p.boolean().default(false),
    /** Where that service and its route are: a server; null: this machine (or Berth runs none). */
    serverId: p.string().length(32).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type RegistryRow = InstanceType<typeof Registry.class>;
export const registryEntities = [Registry];
