// User networks on an engine, as Berth owns them: made with labels naming the record and its
// organization (berth.kind=network), found by exact name, told apart from everything else on the
// host by those labels, and removed only when they are the record's own. The engine's
// answers are read here; no Fastify, no caller: requests.ts decides who may do what.
import type Docker from 'dockerode';
import { BerthError, conflict, iso, type Cradle, type EntityManager, type Logger } from '@berth/core';
import { ID_LABEL, KIND_LABEL, ORGANIZATION_LABEL, ORGANIZATION_NETWORK_PREFIX, type NetworkJoiner, type UserNetworkDirectory } from '@berth/plugin-hosts';
import { Network, type NetworkRow } from './entities.ts';
import type { EngineNetwork, IpamView, NetworkView } from './schemas.ts';

/** The berth.kind of a user network. */
export const NETWORK_KIND = 'network';

/** Names the engine or Berth keeps for itself: never a user network's. */
const ENGINE_NETWORKS = new Set(['bridge', 'host', 'none', 'ingress', 'docker_gwbridge']);

/** A record id as Berth makes them (newId): what a label must hold to name one. */
const RECORD_ID = /^[a-zA-Z0-9_-]{1,32}$/;

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

/** The engine's network summary (GET /networks) as read here. */
export interface EngineSummary {
  Name: string;
  Id: string;
  Driver: string;
  Internal?: boolean;
  Attachable?: boolean;
  Ingress?: boolean;
  Labels?: Record<string, string> | null;
  IPAM?: { Config?: { Subnet?: string }[] | null } | null;
}

export const toView = (row: NetworkRow): NetworkView => ({
  networkId: row.networkId,
  name: row.name,
  driver: row.driver as NetworkView['driver'],
  internal: row.internal,
  attachable: row.attachable,
  enableIPv4: row.enableIPv4,
  enableIPv6: row.enableIPv6,
  mtu: row.mtu ?? null,
  ipam: row.ipam ?? null,
  createdAt: iso(row.createdAt)!,
  organizationId: row.organizationId,
  serverId: row.serverId ?? null,
});

/** The labels a record's network is made with. */
export const ownerLabels = (networkId: string, organizationId: string): Record<string, string> => ({ [KIND_LABEL]: NETWORK_KIND, [ID_LABEL]: networkId, [ORGANIZATION_LABEL]: organizationId });

/** The record id an engine network's labels give it when Berth made it for this organization as a user network; null otherwise. */
export function ownId(network: Pick<EngineSummary, 'Labels'>, organizationId: string): string | null {
  const labels = network.Labels ?? {};
  if (labels[KIND_LABEL] !== NETWORK_KIND || labels[ORGANIZATION_LABEL] !== organizationId) return null;
  const id = labels[ID_LABEL] ?? '';
  return RECORD_ID.test(id) ? id : null;
}

/** Whether the engine's network is the record's own: its name, and labels naming the record and its organization. */
export const isRecords = (network: Pick<EngineSummary, 'Name' | 'Labels'>, row: Pick<NetworkRow, 'name' | 'networkId' | 'organizationId'>) =>
  network.Name === row.name && ownId(network, row.organizationId) === row.networkId;

/** Why a name cannot be a user network's on a host whose platform network is `platformNetwork`, or null. */
export function reservedName(name: string, platformNetwork: string): string | null {
  if (ENGINE_NETWORKS.has(name.toLowerCase())) return `${name} is one of the engine's own networks`;
  if (name === platformNetwork) return `${name} is Berth's platform network`;
  if (name.startsWith(ORGANIZATION_NETWORK_PREFIX)) return `names starting with ${ORGANIZATION_NETWORK_PREFIX} are the organizations' own networks`;
  return null;
}

/**
 * The network of exactly this name on the engine, or null. Found in the engine's list by its name,
 * then inspected by its id: inspecting by the name itself would have the engine resolve it as an id
 * or an id's prefix too (swarm ids are alphanumeric: "x" may be the start of two of them, which the
 * engine answers with an error, not a miss).
 */
export async function findByName(docker: Docker, call: Call, name: string): Promise<EngineNetwork | null> {
  const exact = (await listNetworks(docker, call, { name: [name] })).find(n => n.Name === name);
  if (!exact) return null;
  return call(`inspect the network ${name}`, () =>
    (docker.getNetwork(exact.Id).inspect() as Promise<EngineNetwork>).catch((e: { statusCode?: number }) => (e.statusCode === 404 ? null : Promise.reject(e))),
  );
}

/** Every network on the engine (summaries). */
export const listNetworks = (docker: Docker, call: Call, filters?: Record<string, string[]>) =>
  call('list networks', () => docker.listNetworks(filters ? { filters } : {}) as Promise<EngineSummary[]>);

/** The body of the engine's network create for a record (EnableIPv4 sent only to an engine that reads it). */
export function createBody(row: NetworkRow, enableIPv4Known: boolean): Docker.NetworkCreateOptions & { EnableIPv4?: boolean } {
  const ipam: IpamView = row.ipam ?? {};
  const config = (ipam.config ?? [])
    .map(c => ({ ...(c.subnet ? { Subnet: c.subnet } : {}), ...(c.gateway ? { Gateway: c.gateway } : {}), ...(c.ipRange ? { IPRange: c.ipRange } : {}) }))
    .filter(c => Object.keys(c).length > 0);
  return {
    Name: row.name,
    Driver: row.driver,
    // Engines before API 1.44 accept a second network of the same name unless asked not to.
    CheckDuplicate: true,
    Internal: row.internal,
    Attachable: row.attachable,
    ...(enableIPv4Known ? { EnableIPv4: row.enableIPv4 } : {}),
    EnableIPv6: row.enableIPv6,
    ...(row.mtu ? { Options: { 'com.docker.network.driver.mtu': String(row.mtu) } } : {}),
    IPAM: { Driver: ipam.driver || 'default', ...(config.length ? { Config: config } : {}) },
    Labels: ownerLabels(row.networkId, row.organizationId),
  };
}

/** The engine's API version (e.g. 1.41) as a number to compare. */
export async function apiVersion(docker: Docker, call: Call): Promise<number> {
  const { ApiVersion } = await call('read the engine version', () => docker.version());
  const [major, minor] = String(ApiVersion).split('.').map(Number);
  return (major ?? 0) + (minor ?? 0) / 1000;
}

/** The first API version whose network create reads EnableIPv4 (Docker 28). */
export const ENABLE_IPV4_API = 1 + 47 / 1000;

/**
 * Refuses (CONFLICT) to remove a network something still uses: containers on it on this engine,
 * or services of the swarm naming it. The engine would refuse too, with a reason Berth's converter
 * does not pass on; this says which.
 */
export async function assertUnused(docker: Docker, call: Call, network: EngineNetwork): Promise<void> {
  const containers = Object.values(network.Containers ?? {}).map(c => c.Name);
  const services = await call('list services', () => docker.listServices())
    .catch(() => [])
    .then(list =>
      (list as { Spec?: { Name?: string; TaskTemplate?: { Networks?: { Target?: string }[] } } }[])
        .filter(s => (s.Spec?.TaskTemplate?.Networks ?? []).some(n => n.Target === network.Id || n.Target === network.Name))
        .map(s => s.Spec?.Name ?? '?'),
    );
  const users = [...services.map(s => `service ${s}`), ...containers.map(c => `container ${c}`)];
  if (users.length)
    throw conflict(
      `the network ${network.Name} is in use by ${users.length > 5 ? `${users.slice(0, 5).join(', ')} and ${users.length - 5} more` : users.join(', ')}: take them off it (or remove them) first`,
    );
}

/** A refusal of a workload's network id: the field and the id in the message (a deploy's log shows only that). */
const refused = (code: 'BAD_REQUEST' | 'NOT_FOUND' | 'CONFLICT', field: string, message: string) =>
  new BerthError(code, `${field}: ${message}`, [{ path: field.split('.'), message: `${field}: ${message}` }]);

const hostName = (serverId: string | null) => (serverId ? `the server ${serverId}` : 'this machine');

/**
 * What happens to an organization's networks when it goes: the records' networks removed from
 * their hosts before the rows cascade, and, once it is gone, whatever network of this machine still
 * carries its labels (made while its record was being removed, or by a record lost with a database).
 * Also the directory workloads join their networks through (userNetworks: networkIds).
 */
export class NetworkService implements UserNetworkDirectory {
  readonly #cradle: () => Cradle;
  readonly #log: Logger;

  constructor(cradle: () => Cradle, log: Logger) {
    this.#cradle = cradle;
    this.#log = log;
  }

  async joinable(ids: readonly string[], joiner: NetworkJoiner, opts: { field: string; swarm: boolean; docker?: Docker }, em: EntityManager): Promise<string[]> {
    const { hosts } = this.#cradle();
    const rows = ids.length ? await em.find(Network, { networkId: { $in: [...ids] }, organizationId: joiner.organizationId }) : [];
    const names: string[] = [];
    for (const [i, id] of ids.entries()) {
      const field = `${opts.field}.${i}`;
      // Another organization's record answers as one that does not exist: which ids exist is not told.
      const row = rows.find(r => r.networkId === id);
      if (!row) throw refused('NOT_FOUND', field, `no network ${id} in this organization (network.all lists them)`);
      if ((row.serverId ?? null) !== joiner.serverId)
        throw refused(
          'BAD_REQUEST',
          field,
          `the network ${row.name} (${id}) is on ${hostName(row.serverId ?? null)}, the workload runs on ${hostName(joiner.serverId)}: a workload joins networks of its own host`,
        );
      // A swarm service's tasks join only swarm-scope networks (the peer leaves a bridge out silently; Berth says so).
      if (opts.swarm && row.driver !== 'overlay')
        throw refused('BAD_REQUEST', field, `the network ${row.name} (${id}) is a ${row.driver} network, which a swarm service cannot join: use an overlay network`);
      if (!opts.swarm && row.driver === 'overlay' && !row.attachable)
        throw refused(
          'BAD_REQUEST',
          field,
          `the network ${row.name} (${id}) is an overlay network that is not attachable, which a container cannot join: use an attachable overlay or a bridge network`,
        );
      if (opts.docker) {
        const found = await findByName(opts.docker, (what, fn) => hosts.call(what, fn), row.name);
        if (!found) throw refused('BAD_REQUEST', field, `the network ${row.name} (${id}) is gone from ${hostName(joiner.serverId)}: network.recreate makes it again`);
        if (!isRecords(found, row)) throw refused('CONFLICT', field, `the network named ${row.name} on ${hostName(joiner.serverId)} is not the record ${id}'s (its labels name another owner)`);
      }
      names.push(row.name);
    }
    return names;
  }

  /** Before an organization is deleted: each record's network off its host (failures logged: the deletion goes on). */
  async removeOfOrganization(organizationId: string, em: EntityManager): Promise<void> {
    const { hosts } = this.#cradle();
    for (const row of await em.find(Network, { organizationId })) {
      try {
        const docker = await (await hosts.of(row.serverId ?? null)).engine();
        const found = await findByName(docker, (what, fn) => hosts.call(what, fn), row.name);
        if (found && isRecords(found, row)) await hosts.call(`remove the network ${row.name}`, () => docker.getNetwork(found.Id).remove());
      } catch (err) {
        this.#log.warn({ err, networkId: row.networkId, serverId: row.serverId }, "an organization's network was not removed from its host");
      }
    }
  }

  /** After an organization is gone: this machine's networks labelled as its user networks go (the engine as it is: nothing to prepare for a removal). */
  async sweepThisMachine(organizationId: string): Promise<void> {
    const { hosts } = this.#cradle();
    const docker = await hosts.asIs(null);
    const call: Call = (what, fn) => hosts.call(what, fn);
    const left = await listNetworks(docker, call, { label: [`${KIND_LABEL}=${NETWORK_KIND}`, `${ORGANIZATION_LABEL}=${organizationId}`] });
    for (const n of left.filter(n => ownId(n, organizationId))) {
      await call(`remove the network ${n.Name}`, () => docker.getNetwork(n.Id).remove()).catch((err: unknown) =>
        this.#log.warn({ err, network: n.Name, organizationId }, "a network of a removed organization was not removed from this machine's engine"),
      );
    }
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The organizations' user networks, for their removal (network.* is networkRequests); the kit sees it as userNetworks. */
    networks: NetworkService;
  }
}
