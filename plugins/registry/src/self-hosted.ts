// registry.enableSelfHostedRegistry: a registry service on the manager (this machine's engine or a
// server's), its users in an htpasswd built here (bcrypt) and handed to it as a Swarm secret, its
// data in a volume on that node, reached over https through the proxy (a route like a domain's,
// with the certificate of the proxy's own CA), and every node of that swarm made to trust that CA
// (/etc/docker/certs.d/<registryUrl>/ca.crt, written over the node's connection). Nothing here
// runs a shell string built from input: argv arrays, the CA on standard input.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { badRequest, conflict, optionalService, type Cradle, type EntityManager, type Logger, type ProxyWorkloadConfig } from '@berth/core';
import { ID_LABEL, KIND_LABEL, ORGANIZATION_LABEL, type ContainerHosts, type Host } from '@berth/plugin-hosts';
import type Docker from 'dockerode';
import { authConfig } from './check.ts';
import { Registry } from './entities.ts';

/** The service, its route on the proxy (an appName no workload has: workloads' start with their project's name), its volume. */
export const SELF_HOSTED = { service: 'berth-registry', volume: 'berth-registry-data', port: 5000, label: 'berth.registry.id' } as const;

export interface SelfHostedInput {
  registryId: string;
  registryUrl: string;
  username: string;
  password: string;
  serverId: string | null;
  organizationId: string;
}

export interface SelfHostedDeps {
  hosts: () => ContainerHosts;
  cradle: () => Cradle;
  logger: Logger;
  image: () => string;
  /** How long the registry may take to answer a login through the proxy. */
  readyTimeoutMs: number;
}

/** host and port of a registryUrl (the port absent: the proxy's https port must be 443). */
function addressOf(registryUrl: string): { host: string; port: number | null } {
  const [host, port] = registryUrl.split(':') as [string, string | undefined];
  return { host: host.toLowerCase(), port: port ? Number(port) : null };
}

/** A server joining or leaving the swarm of a manager (this machine for null). */
export interface SwarmChange {
  organizationId: string;
  serverId: string;
  managerServerId: string | null;
}

export class SelfHostedRegistries {
  readonly #deps: SelfHostedDeps;

  constructor(deps: SelfHostedDeps) {
    this.#deps = deps;
  }

  /**
   * Runs the registry and makes it reachable and trusted; on any failure what was made is removed
   * again and the error names the step (the password replaced by ***).
   */
  async enable(input: SelfHostedInput, em: EntityManager): Promise<void> {
    const { config } = this.#deps.cradle();
    const { host, port } = addressOf(input.registryUrl);
    if (!host) throw badRequest('registryUrl: the self-hosted registry needs a host name, which the proxy routes to it');
    if ((port ?? 443) !== config.proxyHttpsPort)
      throw badRequest(
        `registryUrl: the registry is reached through the proxy's https port ${config.proxyHttpsPort} (config proxyHttpsPort), so its address must be ${host}${config.proxyHttpsPort === 443 ? '' : `:${config.proxyHttpsPort}`}`,
      );
    if (input.username.includes(':')) throw badRequest('username: an htpasswd user name cannot contain ":"');
    const routing = optionalService(this.#deps.cradle(), 'proxyRouting');
    const provider = routing?.provider(input.serverId);
    if (!routing || !provider) throw badRequest('The self-hosted registry is reached through the proxy, and no proxy runs (config proxy, env BERTH_PROXY, and the domain plugin)');
    if (!provider.ownCaRoot) throw badRequest(`The active proxy provider "${provider.id}" has no CA of its own for the nodes to trust: the self-hosted registry needs one (the caddy provider has)`);
    const hosts = this.#deps.hosts();
    const docker = await (await hosts.of(input.serverId)).engine();
    const existing = await docker.listServices({ filters: { name: [SELF_HOSTED.service] } });
    if (existing.some(s => s.Spec?.Name === SELF_HOSTED.service))
      throw conflict(`A self-hosted registry already runs on ${input.serverId ? `server ${input.serverId}` : 'this machine'} (service ${SELF_HOSTED.service}): remove its registry first`);

    const redact = (text: string) => text.split(input.password).join('***');
    const step = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        const reason = redact(((e as { json?: { message?: string } }).json?.message ?? (e as Error).message ?? String(e)).trim());
        await this.disable(input, em).catch(() => undefined);
        throw badRequest(`The self-hosted registry could not ${what}: ${reason}`);
      }
    };
    await step('start its service', () => this.#startService(docker, input));
    await step('be routed through the proxy', async () => {
      await routing.ensure(input.serverId);
      await routing.apply('route the registry', () => provider.applyWorkload(routeOf(input, host)));
    });
    const ca = await step("get the proxy's CA", () => waitFor("the proxy's CA root", () => provider.ownCaRoot!(), this.#deps.readyTimeoutMs));
    await step('be trusted by the nodes', () => this.#trustOnNodes(docker, input, ca, em));
    await step('answer a login', () => waitFor(`a login to ${input.registryUrl}`, () => docker.checkAuth(authConfig(input)).then(() => true as const), this.#deps.readyTimeoutMs));
  }

  /** Removes the service, its secret, its route and the CA files on the nodes; the volume (the images) stays. */
  async disable(input: Pick<SelfHostedInput, 'registryId' | 'registryUrl' | 'serverId' | 'organizationId'>, em: EntityManager): Promise<void> {
    const docker = await (await this.#deps.hosts().of(input.serverId)).engine();
    const owned = { label: [`${SELF_HOSTED.label}=${input.registryId}`] };
    for (const s of await docker.listServices({ filters: owned })) await docker.getService(s.ID).remove();
    // The secret is in use until the service's task is gone.
    await waitFor('the registry task to stop', async () => ((await docker.listContainers({ all: true, filters: owned })).length ? null : true), 30_000).catch(() => undefined);
    for (const s of await docker.listSecrets({ filters: owned })) await docker.getSecret(s.ID).remove();
    const routing = optionalService(this.#deps.cradle(), 'proxyRouting');
    const provider = routing?.provider(input.serverId);
    if (routing && provider) await routing.apply('remove the registry route', () => provider.removeWorkload(SELF_HOSTED.service));
    await this.#onNodes(docker, input, em, async host => {
      await host.run(['rm', '-rf', '--', certDir(input.registryUrl)]);
    });
  }

  async #startService(docker: Docker, input: SelfHostedInput): Promise<void> {
    const hosts = this.#deps.hosts();
    const image = this.#deps.image();
    if (input.serverId) await hosts.provideImage(input.serverId, image);
    const { default: bcrypt } = await import('bcryptjs');
    const htpasswd = `${input.username}:${bcrypt.hashSync(input.password, 10)}\n`;
    // Berth's ownership labels (the registry record's), and the registry's own for finding its objects.
    const labels = { [KIND_LABEL]: 'registry', [ID_LABEL]: input.registryId, [ORGANIZATION_LABEL]: input.organizationId, [SELF_HOSTED.label]: input.registryId };
    const secretName = `${SELF_HOSTED.service}-htpasswd-${randomBytes(4).toString('hex')}`;
    const secret = await docker.createSecret({ Name: secretName, Labels: labels, Data: Buffer.from(htpasswd).toString('base64') });
    const { Swarm } = (await docker.info()) as { Swarm: { NodeID: string } };
    await docker.createService({
      Name: SELF_HOSTED.service,
      Labels: labels,
      TaskTemplate: {
        ContainerSpec: {
          Image: image,
          Labels: labels,
          // The public image's settings, through its REGISTRY_* variables (its command is left as it is).
          Env: [
            'REGISTRY_AUTH=htpasswd',
            'REGISTRY_AUTH_HTPASSWD_REALM=Registry',
            'REGISTRY_AUTH_HTPASSWD_PATH=/run/secrets/htpasswd',
            'REGISTRY_STORAGE_DELETE_ENABLED=true',
            // Behind the proxy: upload locations relative to the address the client used.
            'REGISTRY_HTTP_RELATIVEURLS=true',
          ],
          Mounts: [{ Type: 'volume', Source: SELF_HOSTED.volume, Target: '/var/lib/registry', VolumeOptions: { Labels: labels } }],
          Secrets: [{ SecretID: secret.id, SecretName: secretName, File: { Name: 'htpasswd', UID: '0', GID: '0', Mode: 0o444 } }],
        },
        // The volume is this node's: the registry stays on it.
        Placement: { Constraints: [`node.id==${Swarm.NodeID}`] },
        Networks: [{ Target: hosts.platformNetwork }],
        RestartPolicy: { Condition: 'any' },
      },
      Mode: { Replicated: { Replicas: 1 } },
    } as object);
  }

  /** Writes the CA where each node's engine reads it for this registry (no restart needed). */
  async #trustOnNodes(docker: Docker, input: SelfHostedInput, ca: string, em: EntityManager): Promise<void> {
    await this.#onNodes(docker, input, em, (host, name) => trust(host, input.registryUrl, ca, name));
  }

  /**
   * A server joined the swarm of a manager (serverJoinedSwarm): each self-hosted registry of its
   * organization that Berth runs on that manager has its CA written on the new node, as the nodes
   * present when it was enabled had. A failure is logged (the node is a member already), naming the
   * registry and the server; the CA is then written by enabling the registry again.
   */
  async nodeJoined(joined: SwarmChange, em: EntityManager): Promise<void> {
    for (const row of await this.#runningOn(joined, em)) {
      const where = `server ${joined.serverId}`;
      try {
        const hosts = this.#deps.hosts();
        const docker = await (await hosts.of(joined.managerServerId)).engine();
        const runs = await docker.listServices({ filters: { label: [`${SELF_HOSTED.label}=${row.registryId}`] } });
        if (!runs.length) continue;
        const ca = await optionalService(this.#deps.cradle(), 'proxyRouting')?.provider(joined.managerServerId)?.ownCaRoot?.();
        if (!ca) throw new Error("the manager's proxy answers no CA");
        await trust(await hosts.of(joined.serverId), row.registryUrl, ca, where);
        this.#deps.logger.info({ registryId: row.registryId, serverId: joined.serverId }, 'self-hosted registry: the joined node trusts its CA');
      } catch (err) {
        this.#deps.logger.warn(
          { err, registryId: row.registryId, serverId: joined.serverId },
          `self-hosted registry ${row.registryUrl}: ${where} joined its swarm but could not be made to trust its CA; enable the registry again to retry`,
        );
      }
    }
  }

  /**
   * A server left the swarm of a manager (serverLeftSwarm): the CA files of the organization's
   * self-hosted registries on that manager go from it, as they would have with registry.remove had it
   * stayed. A failure is logged, naming the file left.
   */
  async nodeLeft(left: SwarmChange, em: EntityManager): Promise<void> {
    for (const row of await this.#runningOn(left, em)) {
      const dir = certDir(row.registryUrl);
      try {
        const removed = await (await this.#deps.hosts().of(left.serverId)).run(['rm', '-rf', '--', dir]);
        if (removed.code !== 0) throw new Error(removed.stderr.trim());
      } catch (err) {
        this.#deps.logger.warn({ err, registryId: row.registryId, serverId: left.serverId }, `self-hosted registry ${row.registryUrl}: server ${left.serverId} left its swarm but keeps ${dir}`);
      }
    }
  }

  /** The organization's self-hosted registries Berth runs on the manager of a swarm change. */
  #runningOn(change: SwarmChange, em: EntityManager) {
    return em.find(Registry, { organizationId: change.organizationId, runsService: true, serverId: change.managerServerId });
  }

  /**
   * Runs `act` on every node of the manager's swarm that Berth reaches: this machine and the
   * organization's servers, matched by their swarm node id. A node none of them is is logged.
   */
  async #onNodes(
    docker: Docker,
    input: Pick<SelfHostedInput, 'serverId' | 'organizationId'>,
    em: EntityManager,
    act: (host: Awaited<ReturnType<ContainerHosts['of']>>, name: string) => Promise<void>,
  ): Promise<void> {
    const hosts = this.#deps.hosts();
    const nodes = (await docker.listNodes()) as { ID: string; Description?: { Hostname?: string } }[];
    const servers = optionalService(this.#deps.cradle(), 'servers');
    const ids = servers ? (await servers.forPermissions(input.organizationId, em)).map(s => s.serverId) : [];
    const reached = new Set<string>();
    for (const serverId of [input.serverId, ...[null, ...ids].filter(id => id !== input.serverId)]) {
      // A server that does not answer within 5 s (connecting included) is left out: its node is logged.
      const asked = hosts
        .asIs(serverId)
        .then(async engine => ((await engine.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID)
        .catch(() => undefined);
      const nodeId = await Promise.race([asked, sleep(5000, undefined, { ref: false })]);
      if (!nodeId || reached.has(nodeId) || !nodes.some(n => n.ID === nodeId)) continue;
      reached.add(nodeId);
      await act(await hosts.of(serverId), serverId ? `server ${serverId}` : 'this machine');
    }
    const missed = nodes.filter(n => !reached.has(n.ID)).map(n => n.Description?.Hostname ?? n.ID);
    if (missed.length)
      this.#deps.logger.warn({ nodes: missed }, `self-hosted registry: no server of the organization is node ${missed.join(', ')}; its engine's trust of the registry's CA is not managed`);
  }
}

const certDir = (registryUrl: string) => `/etc/docker/certs.d/${registryUrl}`;

/** Writes the CA of registryUrl on one node (the directory as an argument, the CA on standard input). */
async function trust(host: Pick<Host, 'run'>, registryUrl: string, ca: string, name: string): Promise<void> {
  const dir = certDir(registryUrl);
  const written = await host.run(['sh', '-c', 'mkdir -p "$0" && cat > "$0/ca.crt"', dir], { stdin: ca });
  if (written.code !== 0) throw new Error(`writing ${dir}/ca.crt on ${name}: ${written.stderr.trim()}`);
}

/** The registry's route: https on its host, the certificate from the proxy's own CA. */
function routeOf(input: SelfHostedInput, host: string): ProxyWorkloadConfig {
  return {
    appName: SELF_HOSTED.service,
    routes: [
      {
        domainId: input.registryId,
        uniqueConfigKey: 0,
        host,
        path: '/',
        internalPath: '/',
        stripPath: false,
        https: true,
        certificateType: 'none',
        customCertResolver: null,
        port: SELF_HOSTED.port,
        serviceName: null,
        customEntrypoint: null,
        middlewares: [],
      },
    ],
    redirects: [],
    basicAuth: [],
  };
}

/** Asks until `probe` answers a value (null, or a throw, is "not yet"); the last reason on timeout. */
async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const value = await probe();
      if (value !== null) return value;
    } catch (e) {
      last = ((e as { json?: { message?: string } }).json?.message ?? (e as Error).message ?? String(e)).trim();
    }
    if (Date.now() > until) throw new Error(`no answer for ${what} within ${Math.round(timeoutMs / 1000)} s${last ? ` (${last})` : ''}`);
    await new Promise(r => setTimeout(r, 500));
  }
}
