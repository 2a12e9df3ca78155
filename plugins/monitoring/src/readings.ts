// What a host and the engine report, read into numbers. Pure functions, so the arithmetic is tested
// on its own: CPU is the /proc/stat delta over the whole interval between two samples (a spike
// between samples counts), memory is MemTotal − MemAvailable, disk is per mount (statvfs as df
// prints it), network per interface (cumulative counters). A container's CPU is the delta of its
// usage over the delta of the host's between two engine stats, as `docker stats` computes it but
// over the collector's interval; its memory is usage less the inactive page cache, as the Docker CLI.

/** The jiffies of /proc/stat's aggregate line: busy and total. */
export interface CpuTimes {
  busy: number;
  total: number;
}

export function cpuTimes(procStat: string): CpuTimes {
  const line = procStat.split('\n').find(l => l.startsWith('cpu '));
  if (!line) throw new Error('/proc/stat has no aggregate cpu line');
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  const idleAll = idle + iowait;
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idleAll, total };
}

/** Percentage of all cores busy between two readings (0–100); null without a previous reading. */
export function cpuPercent(before: CpuTimes | undefined, after: CpuTimes): number | null {
  if (!before) return null;
  const total = after.total - before.total;
  if (total <= 0) return 0;
  return Math.min(100, Math.max(0, ((after.busy - before.busy) / total) * 100));
}

export interface Memory {
  totalBytes: number;
  usedBytes: number;
}

export function memory(meminfo: string): Memory {
  const kb = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(meminfo);
    if (!m) throw new Error(`/proc/meminfo has no ${name}`);
    return Number(m[1]) * 1024;
  };
  const totalBytes = kb('MemTotal');
  return { totalBytes, usedBytes: totalBytes - kb('MemAvailable') };
}

export interface Interface {
  device: string;
  receiveBytes: number;
  transmitBytes: number;
}

export function interfaces(netDev: string): Interface[] {
  const out: Interface[] = [];
  for (const line of netDev.split('\n').slice(2)) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    out.push({ device: m[1]!, receiveBytes: f[0] ?? 0, transmitBytes: f[8] ?? 0 });
  }
  return out;
}

export interface Mount {
  mount: string;
  totalBytes: number;
  usedBytes: number;
}

/** `df -P -B1` output: every mount with its size and use (df's used, as node-exporter's size − free). */
export function mounts(df: string): Mount[] {
  const out: Mount[] = [];
  for (const line of df.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 6) continue;
    const total = Number(f[1]);
    const avail = Number(f[3]);
    if (!Number.isFinite(total) || total <= 0) continue;
    // size − available, as the percentage df (and the peer's gopsutil) reports counts reserved blocks as used.
    out.push({ mount: f.slice(5).join(' '), totalBytes: total, usedBytes: total - avail });
  }
  return out;
}

/** What does not change between samples: the peer's cpuModel, cores, speed, os, kernel, arch. */
export interface HostInfo {
  cpuModel: string;
  cpuCores: number;
  cpuPhysicalCores: number;
  cpuSpeed: number;
  os: string;
  distro: string;
  kernel: string;
  arch: string;
}

export function hostInfo(cpuinfo: string, osRelease: string, kernel: string, arch: string): HostInfo {
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(cpuinfo)?.[1]?.trim() ?? '';
  const processors = cpuinfo.split('\n').filter(l => /^processor\s*:/.test(l)).length;
  const physical = new Set(cpuinfo.split('\n').filter(l => /^physical id\s*:/.test(l))).size;
  const release = (key: string) => new RegExp(`^${key}="?([^"\\n]*)"?$`, 'm').exec(osRelease)?.[1] ?? '';
  const pretty = release('PRETTY_NAME') || [release('NAME'), release('VERSION')].filter(Boolean).join(' ') || 'linux';
  return {
    cpuModel: [field('vendor_id'), field('model name')].filter(Boolean).join(' '),
    cpuCores: Math.max(1, processors),
    cpuPhysicalCores: Math.max(1, physical || processors),
    cpuSpeed: Number(field('cpu MHz')) || 0,
    os: pretty,
    distro: pretty,
    kernel: kernel.trim(),
    arch: arch.trim(),
  };
}

/** The parts of an engine stats answer (GET /containers/{id}/stats) the collector reads. */
export interface EngineStats {
  /** When the engine read these figures (RFC 3339, nanoseconds; the zero time when it did not). */
  read?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number; online_cpus?: number };
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes?: number; tx_bytes?: number }>;
  blkio_stats?: { io_service_bytes_recursive?: { op: string; value: number }[] | null };
}

export interface ContainerReading {
  /** When the engine read it, in ms since the epoch; NaN when the answer does not say. */
  readAt: number;
  cpuUsage: number;
  systemUsage: number;
  onlineCpus: number;
  memoryUsedBytes: number;
  memoryLimitBytes: number;
  receiveBytes: number;
  transmitBytes: number;
  readBytes: number;
  writeBytes: number;
}

export function containerReading(s: EngineStats): ContainerReading {
  const mem = s.memory_stats ?? {};
  // cgroup v2 names it inactive_file, v1 total_inactive_file: the page cache the kernel can drop.
  const cache = mem.stats?.inactive_file ?? mem.stats?.total_inactive_file ?? 0;
  const usage = mem.usage ?? 0;
  let rx = 0;
  let tx = 0;
  for (const n of Object.values(s.networks ?? {})) {
    rx += n.rx_bytes ?? 0;
    tx += n.tx_bytes ?? 0;
  }
  let read = 0;
  let write = 0;
  for (const e of s.blkio_stats?.io_service_bytes_recursive ?? []) {
    if (/^read$/i.test(e.op)) read += e.value;
    else if (/^write$/i.test(e.op)) write += e.value;
  }
  const readAt = s.read ? Date.parse(s.read) : NaN;
  return {
    // The zero time (0001-01-01) is before the epoch: no time at all.
    readAt: readAt > 0 ? readAt : NaN,
    cpuUsage: s.cpu_stats?.cpu_usage?.total_usage ?? 0,
    systemUsage: s.cpu_stats?.system_cpu_usage ?? 0,
    onlineCpus: s.cpu_stats?.online_cpus ?? 1,
    memoryUsedBytes: Math.max(0, usage - (cache < usage ? cache : 0)),
    memoryLimitBytes: mem.limit ?? 0,
    receiveBytes: rx,
    transmitBytes: tx,
    readBytes: read,
    writeBytes: write,
  };
}

/**
 * A container's CPU between two readings, in `docker stats` units (100 = one core busy): its usage
 * delta over the time between the engine's two reads. `docker stats` divides by the host's CPU time
 * (/proc/stat) instead, times the online cores; that is the same figure where the host counts every
 * tick, and too high where it does not (a busy virtual machine loses ticks: CI's saw a container
 * capped at half a core and held to 39.5 % by its cgroup's count reported at 49.9 %). That way is
 * kept for answers without read times. Null without a previous reading.
 */
export function containerCpuPercent(before: ContainerReading | undefined, after: ContainerReading): number | null {
  if (!before) return null;
  const used = after.cpuUsage - before.cpuUsage;
  if (used < 0) return 0;
  const elapsedMs = after.readAt - before.readAt;
  if (elapsedMs > 0) return (used / (elapsedMs * 1e6)) * 100;
  const system = after.systemUsage - before.systemUsage;
  if (system <= 0) return 0;
  return (used / system) * after.onlineCpus * 100;
}
