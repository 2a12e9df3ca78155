// A user network of one organization: made by Berth on this machine (serverId null) or on one of
// the organization's servers, under a name unique on that host. The engine's network carries the
// record's id and organization as labels; the record keeps what it was made with.
import { columns, defineEntity, p } from '@berth/core';
import type { IpamView } from './schemas.ts';

export const Network = defineEntity({
  name: 'Network',
  tableName: 'networks',
  indexes: [{ properties: ['organizationId', 'serverId', 'createdAt'] }],
  properties: {
    networkId: columns.primaryId(),
    /** The engine's name of the network (unique per host: see the migration's index). */
    name: p.string().length(63),
    driver: p.string().length(16),
    internal: p.boolean(),
    attachable: p.boolean(),
    enableIPv4: p.boolean().fieldName('enable_ipv4'),
    enableIPv6: p.boolean().fieldName('enable_ipv6'),
    mtu: p.integer().nullable(),
    /** The peer's ipam object: { driver?, config?: [{ subnet?, gateway?, ipRange? }] }. */
    ipam: p.json<IpamView>().nullable(),
    organizationId: columns.berthId(),
    /** The organization's server it is on; null: this machine. */
    serverId: p.string().length(32).nullable(),
    createdAt: columns.createdAt(),
  },
});

export type NetworkRow = InstanceType<typeof Network.class>;
export const networkEntities = [Network];
