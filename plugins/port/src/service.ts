// Published ports of applications as the deploy pipeline reads them (the PortDirectory), and the
// ports' holds on the host (a HostPorts holder). port.* is requests.ts.
import { type EntityManager, type TSchema } from '@berth/core';
import { Port, type PortRow } from './entities.ts';
import { PortView } from './schemas.ts';
import { type PortHold, type PortDirectory, type PortRecord } from '@berth/plugin-workloads';

const order = { orderBy: { createdAt: 'asc', portId: 'asc' } } as const;

export class PortService implements PortDirectory {
  /** The ports published on the host (as a HostPorts holder). */
  async holds(port: number, protocol: 'tcp' | 'udp', serverId: string | null, em: EntityManager): Promise<PortHold[]> {
    const rows = await em.find(Port, { publishedPort: port, protocol, serverId });
    return rows.map(r => ({ kind: 'port', id: r.portId }));
  }

  // ------------------------------------------------------------ PortDirectory
  viewSchema(): TSchema {
    return PortView;
  }

  async forApplications(applicationIds: string[], em: EntityManager): Promise<Map<string, PortRecord[]>> {
    const out = new Map<string, PortRecord[]>(applicationIds.map(id => [id, []]));
    if (!applicationIds.length) return out;
    for (const row of await em.find(Port, { applicationId: { $in: applicationIds } }, order)) out.get(row.applicationId)?.push(toRecord(row));
    return out;
  }

  async removeForApplication(applicationId: string, em: EntityManager): Promise<void> {
    await em.nativeDelete(Port, { applicationId });
  }
}

export function toRecord(row: PortRow): PortRecord {
  return { portId: row.portId, publishedPort: row.publishedPort, publishMode: row.publishMode, targetPort: row.targetPort, protocol: row.protocol, applicationId: row.applicationId };
}
