// Why a domain would not answer, told before anyone has to guess from a 404 or a 502: does the
// host resolve to this server (asked of the configured resolver), is the proxy's published port
// reachable from this host, is the workload running and on the proxy's network, and what the
// proxy says of the host's certificate. Each check has a reason a person can act on.
import { Resolver } from 'node:dns/promises';
import { connect } from 'node:net';
import { optionalService, type Cradle, type ProxyProvider } from '@berth/core';
import type { WorkloadRef } from '@berth/plugin-workloads';
import type { Preflight } from './schemas.ts';

type Check = Preflight['checks'][number];

export interface PreflightTarget {
  host: string;
  https: boolean;
  /** The workload behind the domain (null: only the host is checked, as validateDomain does). */
  workload: WorkloadRef | null;
}

export class DomainPreflight {
  readonly #cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  /** The host's IPv4 addresses from the configured resolver (the system's when none is set). */
  async resolve(host: string): Promise<string[]> {
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    const server = this.#cradle().config.dnsResolver;
    if (server) resolver.setServers([server]);
    return resolver.resolve4(host);
  }

  async dns(host: string, expected: string | undefined): Promise<Check> {
    let addresses: string[];
    try {
      addresses = await this.resolve(host);
    } catch (e) {
      const code = (e as { code?: string }).code ?? (e as Error).message;
      return { check: 'dns', ok: false, reason: `${host} does not resolve (${code}): add an A record pointing at ${expected ?? "this server's address"}` };
    }
    if (!expected)
      return {
        check: 'dns',
        ok: null,
        reason: `${host} resolves to ${addresses.join(', ')}; this server's address is not configured (BERTH_SERVER_IP), so whether that is this server cannot be told`,
      };
    if (addresses.includes(expected)) return { check: 'dns', ok: true, reason: `${host} resolves to ${expected}, this server` };
    return { check: 'dns', ok: false, reason: `${host} resolves to ${addresses.join(', ')}, not to this server (${expected}): point its A record at ${expected}` };
  }

  /** The proxy's port is probed where the proxy runs: this host, or the workload's server (its address). */
  async proxyPort(provider: ProxyProvider | null, https: boolean, server?: { serverId: string; ipAddress: string }): Promise<Check> {
    if (!provider) return { check: 'proxyPort', ok: false, reason: 'No proxy is configured (BERTH_PROXY=none): nothing serves domains on this server' };
    const { config } = this.#cradle();
    const port = https ? config.proxyHttpsPort : config.proxyHttpPort;
    const where = server ? `server ${server.serverId} (${server.ipAddress})` : 'this host';
    const reachable = await new Promise<boolean>(resolve => {
      const socket = connect({ host: server?.ipAddress ?? '127.0.0.1', port, timeout: 2000 });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(false));
    });
    return reachable
      ? { check: 'proxyPort', ok: true, reason: `The proxy (${provider.id}) answers on port ${port} of ${where}` }
      : {
          check: 'proxyPort',
          ok: false,
          reason: `Nothing answers on port ${port} of ${where}: the proxy service (${provider.id}) is not running or its port is taken (BERTH_PROXY_${https ? 'HTTPS' : 'HTTP'}_PORT)`,
        };
  }

  async workload(workload: WorkloadRef): Promise<Check> {
    const { hosts } = this.#cradle();
    const docker = await (await hosts.of(workload.serverId)).engine(); // the workload's host
    const network = await hosts.networkOf(workload.organizationId); // the organization's, which the proxy joins
    const name = workload.appName;
    const service = (await docker
      .getService(name)
      .inspect()
      .catch(() => null)) as { Spec?: { TaskTemplate?: { Networks?: { Target?: string }[] } } } | null;
    if (!service) return { check: 'workload', ok: false, reason: `${name} has no service on this server: deploy it` };
    const tasks = (await docker.listTasks({ filters: JSON.stringify({ service: [name], 'desired-state': ['running'] }) })) as { Status?: { State?: string } }[];
    if (!tasks.some(t => t.Status?.State === 'running'))
      return { check: 'workload', ok: false, reason: `${name} has no running task: the proxy would answer 502; look at its deployment and service logs` };
    const networks = (await docker.listNetworks({ filters: JSON.stringify({ name: [network] }) })) as { Id: string; Name: string }[];
    const platform = networks.find(n => n.Name === network);
    const attached = (service.Spec?.TaskTemplate?.Networks ?? []).some(n => n.Target === platform?.Id || n.Target === network);
    if (!attached) return { check: 'workload', ok: false, reason: `${name} is not on the proxy's network ${network}: the proxy cannot reach it (its networkSwarm setting leaves it out)` };
    return { check: 'workload', ok: true, reason: `${name} is running on ${network}` };
  }

  async certificate(provider: ProxyProvider | null, host: string, https: boolean): Promise<Check> {
    if (!https) return { check: 'certificate', ok: true, reason: 'Plain http: no certificate needed' };
    if (!provider) return { check: 'certificate', ok: null, reason: 'No proxy: no certificate' };
    const state = await provider.certificateState(host, https);
    const ok = state.state === 'valid' ? true : state.state === 'pending' ? null : false;
    const reason = state.reason ?? (state.state === 'valid' ? `A certificate from ${state.issuer} is valid until ${state.notAfter}` : `Certificate state: ${state.state}`);
    return { check: 'certificate', ok, reason };
  }

  async run(target: PreflightTarget, provider: ProxyProvider | null): Promise<Preflight> {
    const serverId = target.workload?.serverId ?? null;
    // A workload on a server is served by that server's proxy: its address is the one DNS must name.
    const server = serverId ? await optionalService(this.#cradle(), 'hostServers')?.server(serverId) : null;
    const at = server ? { serverId: server.serverId, ipAddress: server.ipAddress } : undefined;
    const expected = at?.ipAddress ?? this.#cradle().config.serverIp;
    const checks = await Promise.all([
      this.dns(target.host, expected),
      this.proxyPort(provider, target.https, at),
      ...(target.workload ? [this.workload(target.workload).catch(e => ({ check: 'workload' as const, ok: null, reason: `The engine could not be asked: ${(e as Error).message}` }))] : []),
      this.certificate(provider, target.host, target.https).catch(e => ({ check: 'certificate' as const, ok: null, reason: `The proxy could not be asked: ${(e as Error).message}` })),
    ]);
    return { ok: checks.every(c => c.ok !== false), checks };
  }
}
