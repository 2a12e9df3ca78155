// GET /metrics: the collected figures and Berth's own counters in Prometheus' text exposition
// format (0.0.4), for a scraper holding an API key or a bearer token. A caller sees the hosts of
// its organization's servers (label server="<serverId>"), this machine's (server="local") and the
// instance's request counts only as the instance owner, and its organization's deployments. Written by hand, not with prom-client:
// every answer is a view for one caller over figures already stored, where prom-client keeps one
// process-wide registry of live instruments.
import type { BerthHost, EntityManager } from '@berth/core';
import type { MonitoringService } from './service.ts';
import type { MonitoringStore } from './store.ts';

export const METRICS_PATH = '/metrics';

type Labels = Record<string, string>;
interface Family {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  samples: [Labels, number][];
}

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** The families in the text format: HELP and TYPE once, then a line a sample; families without samples are left out. */
export function exposition(families: Family[]): string {
  const out: string[] = [];
  for (const f of families) {
    if (!f.samples.length) continue;
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const [labels, value] of f.samples) {
      const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`);
      out.push(`${f.name}${pairs.length ? `{${pairs.join(',')}}` : ''} ${Number.isFinite(value) ? value : 'NaN'}`);
    }
  }
  return out.join('\n') + '\n';
}

/** Answered requests by status code since this process started (every route, the plugins' own included). */
export class RequestCounter {
  readonly byCode = new Map<number, number>();
  count(code: number): void {
    this.byCode.set(code, (this.byCode.get(code) ?? 0) + 1);
  }
}

export function metricsRoute(berth: BerthHost, store: MonitoringStore, requests: RequestCounter) {
  return (app: Parameters<Parameters<BerthHost['http']>[0]>[0]) => {
    app.server.on('request', (_req, res) => res.once('finish', () => requests.count(res.statusCode)));
    app.get(METRICS_PATH, { schema: { hide: true } }, async (req, reply) => {
      const principal = await berth.authenticate(req);
      const cradle = berth.container.cradle;
      const em = cradle.orm.em.fork() as EntityManager;
      const monitoring: MonitoringService = cradle.monitoring;
      const owner = await cradle.accounts.isInstanceOperator(principal);
      const settings = await store.settings(em);
      const f = (name: string, type: Family['type'], help: string): Family => ({ name: `berth_${name}`, help, type, samples: [] });
      const mem = f('host_memory_used_bytes', 'gauge', 'Memory in use (MemTotal - MemAvailable)');
      const memTotal = f('host_memory_total_bytes', 'gauge', 'Memory of the host (MemTotal)');
      const cpu = f('host_cpu_usage_ratio', 'gauge', 'Share of all cores busy over the last collection interval (0-1)');
      const disk = f('host_disk_used_bytes', 'gauge', 'Bytes of a mounted filesystem not available to users (size - available, as df counts Use%)');
      const diskSize = f('host_disk_size_bytes', 'gauge', 'Size of a mounted filesystem');
      const rx = f('host_network_receive_bytes_total', 'counter', 'Bytes received by a network interface');
      const tx = f('host_network_transmit_bytes_total', 'counter', 'Bytes sent by a network interface');
      const age = f('host_sample_timestamp_seconds', 'gauge', 'When the host figures above were collected (Unix time)');
      const ccpu = f('container_cpu_usage_ratio', 'gauge', "A workload's container CPU over the collection interval (1 = one core)");
      const cmem = f('container_memory_used_bytes', 'gauge', "A workload's container memory (usage less inactive page cache)");
      for (const key of await monitoring.hostKeys(principal.organizationId, owner, em)) {
        const server = { server: key };
        const host = await store.latestHostSample(key, em);
        if (host) {
          mem.samples.push([server, host.memUsed]);
          memTotal.samples.push([server, host.memTotal]);
          cpu.samples.push([server, host.cpu / 100]);
          for (const m of host.mounts) {
            disk.samples.push([{ ...server, mount: m.mount }, m.usedBytes]);
            diskSize.samples.push([{ ...server, mount: m.mount }, m.totalBytes]);
          }
          for (const d of host.devices) {
            rx.samples.push([{ ...server, device: d.device }, d.receiveBytes]);
            tx.samples.push([{ ...server, device: d.device }, d.transmitBytes]);
          }
          age.samples.push([server, host.at.getTime() / 1000]);
        }
        // A workload gone for three collection intervals (a minute at least) is no longer listed.
        const fresh = Math.max(60, 3 * (settings.get(key)?.containers.refreshRate ?? 20)) * 1000;
        for (const c of await store.latestContainerSamples(key, new Date(Date.now() - fresh), em)) {
          ccpu.samples.push([{ ...server, app: c.appName }, c.cpu / 100]);
          cmem.samples.push([{ ...server, app: c.appName }, c.memUsed]);
        }
      }
      // The whole instance's traffic: the instance owner's, like this machine's figures.
      const http = f('http_requests_total', 'counter', 'Requests Berth answered since it started, by status code');
      if (owner) for (const [code, n] of [...requests.byCode].sort(([a], [b]) => a - b)) http.samples.push([{ code: String(code) }, n]);
      const deployments = f('deployments_total', 'counter', "The organization's deployments (and other jobs) by status");
      for (const [status, n] of await store.deploymentsByStatus(principal.organizationId, em)) deployments.samples.push([{ status }, n]);
      return reply
        .type('text/plain; version=0.0.4; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(exposition([mem, memTotal, cpu, disk, diskSize, rx, tx, age, ccpu, cmem, http, deployments]));
    });
  };
}
