// What a host is made of, as the peer's settings.* read it: the engine's disk usage in the rows
// `docker system df` prints, the health of Berth's own infrastructure (its database and its proxy),
// and whether a host can run GPU workloads (its NVIDIA driver, the NVIDIA container runtime, the
// GPUs its swarm node offers). Programs run as argument arrays through the host's runner; a program
// that does not exist (exit 127) is an answer — no GPU — while a host that cannot be reached is an
// error of the call.
import { realpath } from 'node:fs/promises';
import type Docker from 'dockerode';
import { conflict, type Cradle, type HostConnection } from '@berth/core';
import { KIND_LABEL } from '@berth/plugin-hosts';

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

// ------------------------------------------------------------------ disk usage
/** One row of `docker system df`, with the peer's names; sizeBytes is the exact byte count. */
export interface DiskUsageRow {
  type: 'Images' | 'Containers' | 'Local Volumes' | 'Build Cache';
  totalCount: number;
  active: number;
  size: string;
  reclaimable: string;
  sizeBytes: number;
}

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];

/** A size as the Docker CLI prints it: decimal units, four significant digits ("765.7MB", "0B"). */
export function humanSize(bytes: number): string {
  let size = bytes;
  let unit = 0;
  while (size >= 1000 && unit < UNITS.length - 1) {
    size /= 1000;
    unit++;
  }
  return `${Number(size.toPrecision(4))}${UNITS[unit]}`;
}

/** The reclaimable column: the size, and its share of the total when there is one (whole percent, rounded down). */
const share = (reclaimable: number, total: number, percent: boolean) => (percent && total > 0 ? `${humanSize(reclaimable)} (${Math.floor((reclaimable * 100) / total)}%)` : humanSize(reclaimable));

/** What the rows are made of, of the engine's df. */
export interface EngineDf {
  LayersSize?: number;
  Images?: { Size: number; SharedSize: number; Containers: number }[] | null;
  Containers?: { State: string; SizeRw?: number }[] | null;
  Volumes?: { UsageData?: { Size: number; RefCount: number } | null }[] | null;
  BuildCache?: { Size: number; InUse: boolean; Shared?: boolean }[] | null;
}

/** The four rows of `docker system df` from the engine's df: counts, what is in use, sizes, what a prune would reclaim. */
export function diskUsageRows(df: EngineDf): DiskUsageRow[] {
  const row = (type: DiskUsageRow['type'], totalCount: number, active: number, bytes: number, reclaimable: number, percent = true): DiskUsageRow => ({
    type,
    totalCount,
    active,
    size: humanSize(bytes),
    reclaimable: share(reclaimable, bytes, percent),
    sizeBytes: bytes,
  });
  const images = df.Images ?? [];
  const layers = df.LayersSize ?? 0;
  // An image a container uses keeps its own layers; the shared ones are another image's too.
  const usedByContainers = images.filter(i => i.Containers > 0 && i.Size >= 0 && i.SharedSize >= 0).reduce((s, i) => s + i.Size - i.SharedSize, 0);
  const containers = df.Containers ?? [];
  const live = (state: string) => /running|paused|restarting/.test(state);
  const rw = (c: { SizeRw?: number }) => Math.max(0, c.SizeRw ?? 0);
  const volumes = (df.Volumes ?? []).map(v => ({ size: Math.max(0, v.UsageData?.Size ?? 0), used: (v.UsageData?.RefCount ?? 0) > 0 }));
  const cache = (df.BuildCache ?? []).filter(b => !b.Shared);
  return [
    row('Images', images.length, images.filter(i => i.Containers > 0).length, layers, Math.max(0, layers - usedByContainers)),
    row(
      'Containers',
      containers.length,
      containers.filter(c => live(c.State)).length,
      containers.reduce((s, c) => s + rw(c), 0),
      containers.filter(c => !live(c.State)).reduce((s, c) => s + rw(c), 0),
    ),
    row(
      'Local Volumes',
      volumes.length,
      volumes.filter(v => v.used).length,
      volumes.reduce((s, v) => s + v.size, 0),
      volumes.filter(v => !v.used).reduce((s, v) => s + v.size, 0),
    ),
    row(
      'Build Cache',
      (df.BuildCache ?? []).length,
      (df.BuildCache ?? []).filter(b => b.InUse).length,
      cache.reduce((s, b) => s + b.Size, 0),
      cache.filter(b => !b.InUse).reduce((s, b) => s + b.Size, 0),
      false,
    ),
  ];
}

// ------------------------------------------------------------------ infrastructure health
export interface ServiceHealth {
  status: 'healthy' | 'unhealthy';
  message?: string;
}

/** Berth's database answers a query. */
export async function databaseHealth(cradle: Cradle): Promise<ServiceHealth> {
  try {
    await cradle.orm.em.fork().getConnection().execute('select 1');
    return { status: 'healthy' };
  } catch (e) {
    return { status: 'unhealthy', message: `Berth's database does not answer: ${(e as Error).message}` };
  }
}

/**
 * This machine's proxy: the service Berth runs for the active provider (owner kind `proxy`, its
 * container mounting the provider's configuration directory), with replicas and a running task.
 */
export async function proxyHealth(cradle: Cradle): Promise<ServiceHealth> {
  const proxy = cradle.config.proxy;
  if (proxy === 'none') return { status: 'unhealthy', message: 'No proxy runs: the configuration says proxy: none (BERTH_PROXY), so no domain is served' };
  const dirs = new Set([cradle.providers.get('proxy', proxy).configDir]);
  for (const dir of [...dirs]) dirs.add(await realpath(dir).catch(() => dir));
  const docker = await (await cradle.hosts.of(null)).engine();
  const call: Call = (what, fn) => cradle.hosts.call(what, fn);
  const services = (await call('list the proxy services', () => docker.listServices({ filters: JSON.stringify({ label: [`${KIND_LABEL}=proxy`] }) }))).filter(s =>
    (s.Spec?.TaskTemplate as { ContainerSpec?: { Mounts?: { Source?: string }[] } } | undefined)?.ContainerSpec?.Mounts?.some(m => dirs.has(m.Source ?? '')),
  );
  const service = services[0];
  if (!service) return { status: 'unhealthy', message: `The ${proxy} proxy service is not running on this machine: it starts with the first domain served (or settings.reloadTraefik)` };
  const name = service.Spec?.Name ?? service.ID;
  if ((service.Spec?.Mode?.Replicated?.Replicas ?? 1) === 0) return { status: 'unhealthy', message: `Service ${name} has 0 replicas configured` };
  const tasks = (await call(`list the tasks of ${name}`, () => docker.listTasks({ filters: JSON.stringify({ service: [service.ID], 'desired-state': ['running'] }) }))) as {
    Status?: { State?: string };
  }[];
  if (!tasks.some(task => task.Status?.State === 'running')) return { status: 'unhealthy', message: `Service ${name} has no running task (current state: ${tasks[0]?.Status?.State ?? 'none'})` };
  return { status: 'healthy' };
}

// ------------------------------------------------------------------ GPU
/** The peer's GPU status; the optional fields are absent when nothing was found. */
export interface GpuStatus {
  driverInstalled: boolean;
  driverVersion?: string;
  gpuModel?: string;
  runtimeInstalled: boolean;
  runtimeConfigured: boolean;
  cudaSupport: boolean;
  cudaVersion?: string;
  memoryInfo?: string;
  availableGPUs: number;
  swarmEnabled: boolean;
  gpuResources: number;
}

const lines = (text: string) =>
  text
    .split('\n')
    .map(l => l.trim())
    .filter(Boolean);

/** nvidia-smi's CSV answers, and `nvidia-smi -q`'s CUDA line. */
export function parseNvidiaSmi(o: { driver: string; names: string; info: string; query: string }): Pick<GpuStatus, 'driverVersion' | 'availableGPUs' | 'gpuModel' | 'memoryInfo' | 'cudaVersion'> {
  const [gpuModel, memoryInfo] = (lines(o.info)[0] ?? '').split(',').map(s => s.trim());
  const cuda = /CUDA Version\s*:\s*([\d.]+)/.exec(o.query)?.[1];
  return {
    ...(lines(o.driver)[0] ? { driverVersion: lines(o.driver)[0] } : {}),
    availableGPUs: lines(o.names).length,
    ...(gpuModel ? { gpuModel } : {}),
    ...(memoryInfo ? { memoryInfo } : {}),
    ...(cuda ? { cudaVersion: cuda } : {}),
  };
}

/** The GPUs a swarm node offers (its generic resources of kind GPU). */
export function nodeGpus(resources: { DiscreteResourceSpec?: { Kind?: string; Value?: number } }[] | null | undefined): number {
  const gpu = (resources ?? []).find(r => r.DiscreteResourceSpec?.Kind?.toUpperCase() === 'GPU');
  return gpu?.DiscreteResourceSpec?.Value ?? 0;
}

/** What the host says of its GPUs: its driver (nvidia-smi), the container runtime and Docker's use of it, its swarm node's GPU resources. */
export async function gpuStatus(host: Pick<HostConnection, 'run'>, docker: Docker, call: Call): Promise<GpuStatus> {
  const smi = async (...args: string[]) => {
    const r = await host.run(['nvidia-smi', ...args]);
    return r.code === 0 ? r.stdout : '';
  };
  const driver = await smi('--query-gpu=driver_version', '--format=csv,noheader');
  const found = driver.trim()
    ? parseNvidiaSmi({
        driver,
        names: await smi('--query-gpu=gpu_name', '--format=csv,noheader'),
        info: await smi('--query-gpu=gpu_name,memory.total', '--format=csv,noheader'),
        query: await smi('-q'),
      })
    : { availableGPUs: 0 };
  // A fixed script, no input in it: `command -v` is the shell's, and no other program is sure to exist.
  const runtime = await host.run(['sh', '-c', 'command -v nvidia-container-runtime']);
  const info = (await call('read the engine information', () => docker.info())) as { Runtimes?: Record<string, unknown>; DefaultRuntime?: string; Swarm?: { NodeID?: string } };
  const nodeId = info.Swarm?.NodeID;
  const node = nodeId
    ? ((await call('inspect the swarm node', () => docker.getNode(nodeId).inspect())) as {
        Description?: { Resources?: { GenericResources?: { DiscreteResourceSpec?: { Kind?: string; Value?: number } }[] | null } };
      })
    : null;
  const gpuResources = nodeGpus(node?.Description?.Resources?.GenericResources);
  return {
    driverInstalled: Boolean(found.driverVersion),
    runtimeInstalled: runtime.code === 0 && runtime.stdout.trim() !== '',
    runtimeConfigured: Boolean(info.Runtimes && 'nvidia' in info.Runtimes) && info.DefaultRuntime === 'nvidia',
    cudaSupport: Boolean(found.cudaVersion),
    swarmEnabled: gpuResources > 0,
    gpuResources,
    ...found,
  };
}

/**
 * setupGPU: the peer's checks, then its answer when the host is set up already. Berth does not
 * rewrite the Docker daemon's configuration or restart it (host access is the operator's to
 * grant): a host with the driver and the runtime, not yet configured, is answered the steps.
 */
export function gpuSetupAnswer(status: GpuStatus, where: string): { success: true } {
  if (!status.driverInstalled) throw conflict(`NVIDIA drivers not installed on ${where} (nvidia-smi finds none): install the NVIDIA drivers first`);
  if (!status.runtimeInstalled) throw conflict(`NVIDIA Container Runtime not installed on ${where}: install nvidia-container-runtime first`);
  if (status.swarmEnabled && status.runtimeConfigured) return { success: true };
  throw conflict(
    `Berth does not rewrite the Docker daemon's configuration of ${where}. On it: in /etc/docker/daemon.json set runtimes.nvidia.path "nvidia-container-runtime", "default-runtime": "nvidia" and "node-generic-resources": ["GPU=${status.availableGPUs}"]; add swarm-resource = "DOCKER_RESOURCE_GPU" to /etc/nvidia-container-runtime/config.toml; restart Docker; label its swarm node gpu=true. checkGPUStatus then answers swarmEnabled, and setupGPU success`,
  );
}
