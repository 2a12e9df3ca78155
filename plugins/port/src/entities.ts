// A port an application publishes. serverId is the application's host when the port was
// created (null = the local engine): published ports are a resource of the host, shared by
// every organization on it, so conflicts are found per host. organizationId confines reads
// and writes without asking the application plugin.
import { columns, defineEntity, p } from '@berth/core';

export const Port = defineEntity({
  name: 'Port',
  tableName: 'ports',
  properties: {
    portId: columns.primaryId(),
    publishedPort: p.integer(),
    publishMode: p.enum(['ingress', 'host'] as const),
    targetPort: p.integer(),
    protocol: p.enum(['tcp', 'udp'] as const),
    applicationId: columns.berthId(),
    serverId: columns.berthId().nullable(),
    organizationId: columns.berthId(),
    createdAt: columns.createdAt(),
  },
});

export type PortRow = InstanceType<typeof Port.class>;
export const portEntities = [Port];
