// swarm.getContainerStats: one reading per running container, in the strings `docker stats
// --no-stream` prints (the peer runs that command and answers its lines), computed here from the
// engine's own stats API (no CLI): CPU against the whole host's, memory without the page cache,
// network and block I/O totals.
import { Type, type Static } from '@berth/core';

export const ContainerStat = Type.Object({
  BlockIO: Type.String({ description: 'bytes read / written, as docker stats prints them ("1.2MB / 0B")' }),
  CPUPerc: Type.String({ description: 'CPU use ("0.25%"; 100 % is one core)' }),
  Container: Type.String({ description: 'the short id' }),
  ID: Type.String({ description: 'the short id' }),
  MemPerc: Type.String({ description: 'memory use against its limit ("1.50%")' }),
  MemUsage: Type.String({ description: 'used / limit ("12.3MiB / 1.94GiB")' }),
  Name: Type.String(),
  NetIO: Type.String({ description: 'bytes received / sent ("648B / 0B")' }),
});
export type ContainerStat = Static<typeof ContainerStat>;

/** What the engine's stats API answers (stream false), the fields read here. */
export interface EngineStats {
  cpu_stats?: { cpu_usage?: { total_usage?: number; percpu_usage?: number[] }; system_cpu_usage?: number; online_cpus?: number };
  precpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number };
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes?: number; tx_bytes?: number }>;
  blkio_stats?: { io_service_bytes_recursive?: { op: string; value: number }[] | null };
}

/** A size as docker prints it: powers of 1024 for memory ("MiB"), of 1000 for I/O ("MB"), four significant digits. */
function size(bytes: number, binary: boolean): string {
  const base = binary ? 1024 : 1000;
  const units = binary ? ['B', 'KiB', 'MiB', 'GiB', 'TiB'] : ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= base && unit < units.length - 1) {
    value /= base;
    unit++;
  }
  return `${Number(value.toPrecision(4))}${units[unit]}`;
}

/** The reading of one container from its engine stats. */
export function statOf(id: string, name: string, s: EngineStats): ContainerStat {
  const cpu = s.cpu_stats ?? {};
  const cpuDelta = (cpu.cpu_usage?.total_usage ?? 0) - (s.precpu_stats?.cpu_usage?.total_usage ?? 0);
  const systemDelta = (cpu.system_cpu_usage ?? 0) - (s.precpu_stats?.system_cpu_usage ?? 0);
  const cpus = cpu.online_cpus || cpu.cpu_usage?.percpu_usage?.length || 1;
  const cpuPercent = cpuDelta > 0 && systemDelta > 0 ? (cpuDelta / systemDelta) * cpus * 100 : 0;
  const memory = s.memory_stats ?? {};
  // As docker stats: the page cache is not counted (cgroup v2: inactive_file; v1: total_inactive_file).
  const cache = memory.stats?.inactive_file ?? memory.stats?.total_inactive_file ?? 0;
  const used = Math.max(0, (memory.usage ?? 0) - cache);
  const limit = memory.limit ?? 0;
  const nets = Object.values(s.networks ?? {});
  const io = s.blkio_stats?.io_service_bytes_recursive ?? [];
  const total = (op: string) => io.filter(e => e.op.toLowerCase() === op).reduce((sum, e) => sum + e.value, 0);
  const short = id.slice(0, 12);
  return {
    BlockIO: `${size(total('read'), false)} / ${size(total('write'), false)}`,
    CPUPerc: `${cpuPercent.toFixed(2)}%`,
    Container: short,
    ID: short,
    MemPerc: `${(limit ? (used / limit) * 100 : 0).toFixed(2)}%`,
    MemUsage: `${size(used, true)} / ${size(limit, true)}`,
    Name: name.replace(/^\//, ''),
    NetIO: `${size(
      nets.reduce((sum, n) => sum + (n.rx_bytes ?? 0), 0),
      false,
    )} / ${size(
      nets.reduce((sum, n) => sum + (n.tx_bytes ?? 0), 0),
      false,
    )}`,
  };
}
