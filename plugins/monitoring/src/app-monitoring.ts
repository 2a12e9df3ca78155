// application.readAppMonitoring: the peer's history of one service's figures (its latest 288
// samples, as the peer keeps them), from Berth's own store. appName names a workload of the
// caller's organization, on this machine or on one of its servers; "dokploy", the peer's name
// for itself, answers this machine's host figures, to the instance operators only. The peer reads
// its files for any appName it is given; Berth answers 404 for an appName the organization has
// no workload under.
import { BerthError, forbidden, optionalService, Type, schema, type Cradle, type EntityManager } from '@berth/core';
import { LOCAL, type MonitoringStore } from './store.ts';

const { Timestamp } = schema;
/** How many samples the peer keeps per service and figure. */
const KEPT = 288;
/** The peer's appName for itself (its own host). */
const SELF = 'dokploy';
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

const point = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.String>>(value: T) => Type.Object({ value, time: Timestamp() });
// The MB figures are strings ("1.25"), as the peer's SDK reads them.
const Mb = () => Type.String({ description: 'MB, two decimals' });
export const AppMonitoring = Type.Object(
  {
    cpu: Type.Array(point(Type.String({ description: 'CPU use as docker stats prints it ("1.25%")' }))),
    memory: Type.Array(point(Type.Object({ used: Type.String({ description: 'as docker stats prints it ("12.5MiB")' }), total: Type.String() }))),
    disk: Type.Array(
      point(
        Type.Object({ diskTotal: Type.Number(), diskUsedPercentage: Type.Number(), diskUsage: Type.Number(), diskFree: Type.Number() }, { description: 'GB; this machine only (appName "dokploy")' }),
      ),
    ),
    network: Type.Array(point(Type.Object({ inputMb: Mb(), outputMb: Mb() }))),
    block: Type.Array(point(Type.Object({ readMb: Mb(), writeMb: Mb() }, { description: 'containers only' }))),
  },
  { description: 'always answered (the peer answers null when the container is not running; Berth answers the figures it keeps)' },
);

/** Bytes as docker stats prints a size. */
function dockerSize(bytes: number): string {
  if (bytes >= GiB) return `${(bytes / GiB).toFixed(2)}GiB`;
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(2)}MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(2)}KiB`;
  return `${Math.round(bytes)}B`;
}
const mb = (bytes: number) => (bytes / MiB).toFixed(2);
const gb = (bytes: number) => Math.round((bytes / GiB) * 100) / 100;

/** The host that runs the organization's workload named appName (LOCAL: this machine), or null. */
async function hostOf(cradle: Cradle, appName: string, organizationId: string, em: EntityManager): Promise<string | null> {
  const servers = (await optionalService(cradle, 'servers')?.all(organizationId, em)) ?? [];
  for (const serverId of [null, ...servers.map(s => s.serverId)]) {
    const found = await cradle.workloads.byAppName(appName, serverId, em);
    if (found && found.organizationId === organizationId) return serverId ?? LOCAL;
  }
  return null;
}

export async function appMonitoring(store: MonitoringStore, cradle: Cradle, appName: string, organizationId: string, operator: boolean, em: EntityManager) {
  if (appName === SELF) {
    if (!operator) throw forbidden(`appName: "${SELF}" is this machine, whose figures are the instance operators' alone`);
    const samples = await store.hostSamples(LOCAL, KEPT, em);
    const time = (at: Date) => at.toISOString();
    return {
      cpu: samples.map(s => ({ value: `${s.cpu.toFixed(2)}%`, time: time(s.at) })),
      memory: samples.map(s => ({ value: { used: dockerSize(s.memUsed), total: dockerSize(s.memTotal) }, time: time(s.at) })),
      disk: samples.map(s => ({
        value: {
          diskTotal: gb(s.diskTotal),
          diskUsedPercentage: s.diskTotal ? Math.round((s.diskUsed / s.diskTotal) * 10000) / 100 : 0,
          diskUsage: gb(s.diskUsed),
          diskFree: gb(s.diskTotal - s.diskUsed),
        },
        time: time(s.at),
      })),
      network: samples.map(s => ({ value: { inputMb: mb(s.netIn), outputMb: mb(s.netOut) }, time: time(s.at) })),
      block: [],
    };
  }
  const host = await hostOf(cradle, appName, organizationId, em);
  if (!host) throw new BerthError('NOT_FOUND', `appName: no workload of the organization is named ${appName}`);
  const samples = await store.containerSamples(host, appName, KEPT, em);
  const time = (at: Date) => at.toISOString();
  return {
    cpu: samples.map(s => ({ value: `${s.cpu.toFixed(2)}%`, time: time(s.at) })),
    memory: samples.map(s => ({ value: { used: dockerSize(s.memUsed), total: dockerSize(s.memLimit) }, time: time(s.at) })),
    disk: [],
    network: samples.map(s => ({ value: { inputMb: mb(s.netIn), outputMb: mb(s.netOut) }, time: time(s.at) })),
    block: samples.map(s => ({ value: { readMb: mb(s.blkRead), writeMb: mb(s.blkWrite) }, time: time(s.at) })),
  };
}
