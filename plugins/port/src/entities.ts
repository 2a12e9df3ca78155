// A port an application publishes. serverId is the application's host when the port was
// created (null = the local engine): published ports are a resource of the host, shared by
// every organization on it, so conflicts are found per host. organizationId confines reads
// and writes without asking the application plugin.
import { defineEntity, p, newId } from '@berth/core';

export const Port = defineEntity({
  name: 'Port',
  tableName: 'ports',
  properties: {
    portId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    publishedPort: p.integer(),
    publishMode: p.enum(['ingress', 'host'] as const),
    targetPort: p.integer(),
    protocol: p.enum(['tcp', 'udp'] as const),
    applicationId: p.string().length(32),
    serverId: p.string().length(32).nullable(),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type PortRow = InstanceType<typeof Port.class>;
export const portEntities = [Port];
