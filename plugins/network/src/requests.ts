// network.*: the caller's organization's user networks, on this machine or on one of its servers
// (through hosts.of(serverId): a record that names a server is never made on this machine's
// engine). A network is made with labels naming its record and organization; inspect, recreate and
// remove act only on the network that carries the record's labels, and import takes only networks
// Berth made for this organization. Request-scoped: the caller's organization and entity manager
// come from the container.
import type Docker from 'dockerode';
import { BerthError, conflict, invalidField, notFound, optionalService, parseField, RequestScope } from '@berth/core';
import { contains, overlaps, parseAddress, parseBlock, within, type Block } from './addresses.ts';
import { Network, type NetworkRow } from './entities.ts';
import { DRIVERS, type CreateInput, type EngineNetwork, type ImportInput, type ImportResult, type IpamView, type NetworkView, type SyncView } from './schemas.ts';
import { apiVersion, assertUnused, createBody, ENABLE_IPV4_API, findByName, isRecords, listNetworks, ownId, reservedName, toView, type EngineSummary } from './service.ts';

/** Registered asClass(...).scoped() as `networkRequests`. */
export class NetworkRequests extends RequestScope {
  /** The organization's networks on one host (this machine when serverId is absent or empty), newest first. */
  async all(serverId: string | undefined): Promise<NetworkView[]> {
    const host = await this.#host(serverId);
    const rows = await this.em.find(Network, { organizationId: this.organizationId, serverId: host }, { orderBy: { createdAt: 'desc', networkId: 'asc' } });
    return rows.map(toView);
  }

  async one(networkId: string): Promise<NetworkView> {
    return toView(await this.#find(networkId));
  }

  /** A new record and its network on the host, made with Berth's labels; the record goes again when the engine refuses. */
  async create(input: CreateInput): Promise<NetworkView> {
    const serverId = await this.#host(input.serverId);
    const reserved = reservedName(input.name, this.cradle.hosts.platformNetwork);
    if (reserved) throw invalidField('name', `${reserved}: choose another name`);
    const enableIPv4 = input.enableIPv4 ?? true;
    const enableIPv6 = input.enableIPv6 ?? false;
    if (!enableIPv4 && !enableIPv6) throw invalidField('enableIPv4', 'IPv4 or IPv6 must be enabled');
    const ipam = input.ipam === undefined ? {} : input.ipam === null ? null : ipamOf(input.ipam);
    const blocks = checkRanges(ipam, enableIPv6);
    // This machine is every organization's: the addresses its networks take are its operators' to choose (a
    // subnet that covers the host's own routes would cut it off). On a server of the organization, anything.
    if (serverId === null && (blocks.length || (ipam?.driver && ipam.driver !== 'default')) && !(await this.cradle.accounts.isInstanceOperator(this.principal))) {
      const field = blocks.length ? 'ipam.config' : 'ipam.driver';
      throw new BerthError(
        'FORBIDDEN',
        `${field}: on Berth's own machine only its instance operators choose a network's addresses and IPAM driver; leave them out (the engine picks a free range) or use a server of the organization`,
        [{ path: field.split('.'), message: `${field}: only the instance operators choose addresses on Berth's own machine` }],
      );
    }
    if (await this.em.count(Network, { name: input.name, serverId })) throw conflict(`a network named ${input.name} already exists on this host`);

    const { docker, call } = await this.#engine(serverId);
    const existing = await findByName(docker, call, input.name);
    if (existing) {
      const unrecorded = ownId(existing, this.organizationId) !== null;
      throw conflict(`a network named ${input.name} already exists on this host${unrecorded ? ': it is a network Berth made for this organization, which network.import takes back' : ''}`);
    }
    if (!enableIPv4 && (await apiVersion(docker, call)) < ENABLE_IPV4_API) {
      throw invalidField('enableIPv4', "this host's Docker engine cannot turn IPv4 off (Docker 28, engine API 1.47, is the first that can)");
    }
    await assertFree(docker, call, blocks);

    const row = this.em.create(Network, {
      name: input.name,
      driver: input.driver ?? 'bridge',
      internal: input.internal ?? false,
      attachable: input.attachable ?? false,
      enableIPv4,
      enableIPv6,
      mtu: input.mtu ?? null,
      ipam,
      organizationId: this.organizationId,
      serverId,
      createdAt: new Date(),
    });
    await this.em.flush();
    try {
      await this.#make(docker, call, row);
    } catch (e) {
      await this.em.nativeDelete(Network, { networkId: row.networkId });
      throw e;
    }
    return toView(row);
  }

  /** The engine's own answer for the record's network (NOT_FOUND when it is not on its host; CONFLICT when the name is another network's). */
  async inspect(networkId: string): Promise<EngineNetwork> {
    const row = await this.#find(networkId);
    const { docker, call } = await this.#engine(row.serverId ?? null);
    const found = await findByName(docker, call, row.name);
    if (!found) throw new BerthError('NOT_FOUND', `The network ${row.name} is not on its host: network.recreate makes it again`);
    this.#assertRecords(found, row);
    return found;
  }

  /** Makes the record's network again when it is gone from its host; answers the record (unchanged when the network is there). */
  async recreate(networkId: string): Promise<NetworkView> {
    const row = await this.#find(networkId);
    const { docker, call } = await this.#engine(row.serverId ?? null);
    const found = await findByName(docker, call, row.name);
    if (found) this.#assertRecords(found, row);
    else await this.#make(docker, call, row);
    return toView(row);
  }

  /**
   * Removes the record's network from its host (CONFLICT while services or containers use it) and
   * the record. A network of that name that is not the record's stays where it is.
   */
  async remove(networkId: string): Promise<NetworkView> {
    const row = await this.#find(networkId);
    const { docker, call } = await this.#engine(row.serverId ?? null);
    const found = await findByName(docker, call, row.name);
    if (found && isRecords(found, row)) {
      await assertUnused(docker, call, found);
      await call(`remove the network ${row.name}`, () =>
        docker
          .getNetwork(found.Id)
          .remove()
          .catch((e: { statusCode?: number }) => (e.statusCode === 404 ? undefined : Promise.reject(e))),
      );
    }
    const view = toView(row);
    await this.em.nativeDelete(Network, { networkId: row.networkId, organizationId: this.organizationId });
    return view;
  }

  /**
   * What to sync on a host: networks Berth made for this organization that no record names
   * (importable), and records whose network is not there (missing). Nothing else on the host is
   * listed.
   */
  async networksToSync(serverId: string | undefined): Promise<SyncView> {
    const host = await this.#host(serverId);
    const rows = await this.em.find(Network, { organizationId: this.organizationId, serverId: host }, { orderBy: { createdAt: 'desc', networkId: 'asc' } });
    const { docker, call } = await this.#engine(host);
    const onHost = await listNetworks(docker, call);
    const recorded = await this.#recordedOn(host, onHost);
    const importable = onHost
      .filter(n => importable_(n, this.organizationId) && !recorded.ids.has(ownId(n, this.organizationId)!) && !recorded.names.has(n.Name))
      .sort((a, b) => a.Name.localeCompare(b.Name))
      .map(n => ({
        name: n.Name,
        driver: n.Driver,
        internal: n.Internal ?? false,
        attachable: n.Attachable ?? false,
        subnets: (n.IPAM?.Config ?? []).map(c => c.Subnet).filter((s): s is string => !!s),
      }));
    const missing = rows.filter(row => !onHost.some(n => isRecords(n, row))).map(row => ({ networkId: row.networkId, name: row.name }));
    return { importable, missing };
  }

  /**
   * Records for networks Berth made for this organization on the host (their labels name the
   * record id, which the record takes back); each other name is answered with why not.
   */
  async import(input: ImportInput): Promise<ImportResult> {
    const host = await this.#host(input.serverId);
    const { docker, call } = await this.#engine(host);
    const imported: string[] = [];
    const errors: ImportResult['errors'] = [];
    for (const name of [...new Set(input.names)]) {
      const found = await findByName(docker, call, name);
      const id = found ? ownId(found, this.organizationId) : null;
      // One answer for a name nothing holds and for a network that is not this organization's: which networks exist is not told.
      if (!found || !id) {
        errors.push({ name, error: 'no network Berth made for this organization has this name on this host (a network Berth did not make, or made for another organization, is not imported)' });
        continue;
      }
      if (await this.em.count(Network, { $or: [{ networkId: id }, { name, serverId: host }] })) {
        errors.push({ name, error: 'Already imported' });
        continue;
      }
      if (!importable_(found, this.organizationId) || reservedName(name, this.cradle.hosts.platformNetwork)) {
        errors.push({ name, error: 'Network is reserved or not supported (a bridge or overlay network is)' });
        continue;
      }
      this.em.create(Network, {
        networkId: id,
        name,
        driver: found.Driver,
        internal: found.Internal ?? false,
        attachable: found.Attachable ?? false,
        // An engine before Docker 28 does not say: IPv4 is always on there.
        enableIPv4: found.EnableIPv4 ?? true,
        enableIPv6: found.EnableIPv6 ?? false,
        mtu: mtuOf(found.Options?.['com.docker.network.driver.mtu']),
        ipam: {
          driver: found.IPAM?.Driver,
          config: (found.IPAM?.Config ?? []).map(c => ({ ...(c.Subnet ? { subnet: c.Subnet } : {}), ...(c.Gateway ? { gateway: c.Gateway } : {}), ...(c.IPRange ? { ipRange: c.IPRange } : {}) })),
        },
        organizationId: this.organizationId,
        serverId: host,
        createdAt: new Date(),
      });
      await this.em.flush();
      imported.push(name);
    }
    return { imported, errors };
  }

  // ------------------------------------------------------------ helpers
  /** One of the organization's records (NOT_FOUND otherwise: another organization's is never FORBIDDEN). */
  #find(networkId: string): Promise<NetworkRow> {
    return this.owned(Network, { networkId }, 'Network');
  }

  /** The host a serverId names: null (this machine) when absent or empty, else one of the organization's servers (NOT_FOUND otherwise). */
  async #host(serverId: string | null | undefined): Promise<string | null> {
    if (!serverId) return null;
    const owner = await optionalService(this.cradle, 'hostServers')?.organizationOf(serverId);
    if (owner !== this.organizationId) throw notFound(`Server ${serverId}`);
    return serverId;
  }

  /** The engine of the host, prepared (a server's over its connection: never this machine's for a record naming a server). */
  async #engine(serverId: string | null): Promise<{ docker: Docker; call: <T>(what: string, fn: () => Promise<T>) => Promise<T> }> {
    const hosts = this.cradle.hosts;
    const docker = await (await hosts.of(serverId)).engine();
    return { docker, call: (what, fn) => hosts.call(what, fn) };
  }

  /** Makes the record's network on the engine, with its labels. */
  async #make(docker: Docker, call: <T>(what: string, fn: () => Promise<T>) => Promise<T>, row: NetworkRow): Promise<void> {
    const knowsIPv4 = (await apiVersion(docker, call)) >= ENABLE_IPV4_API;
    await call(`create the network ${row.name}`, () => docker.createNetwork(createBody(row, knowsIPv4)));
  }

  /** CONFLICT when the network of the record's name is not the record's own. */
  #assertRecords(found: EngineNetwork, row: NetworkRow): void {
    if (!isRecords(found, row)) throw conflict(`a network named ${row.name} exists on this host and is not Berth's network for this record: it is left alone`);
  }

  /** The ids and names of the records on a host (whichever organization's: a name is one network per host). */
  async #recordedOn(serverId: string | null, onHost: EngineSummary[]): Promise<{ ids: Set<string>; names: Set<string> }> {
    const ids = onHost.map(n => ownId(n, this.organizationId)).filter((id): id is string => !!id);
    const rows = await this.em.find(Network, { $or: [{ networkId: { $in: ids } }, { serverId, name: { $in: onHost.map(n => n.Name) } }] }, { fields: ['networkId', 'name'] });
    return { ids: new Set(rows.map(r => r.networkId)), names: new Set(rows.map(r => r.name)) };
  }
}

/** A network Berth made for this organization that a record may take: a bridge or overlay, not the swarm's ingress. */
function importable_(n: Pick<EngineSummary, 'Driver' | 'Ingress' | 'Labels'>, organizationId: string): boolean {
  return ownId(n, organizationId) !== null && (DRIVERS as readonly string[]).includes(n.Driver) && !n.Ingress;
}

const mtuOf = (value: string | undefined) => {
  const mtu = Number.parseInt(value ?? '', 10);
  return Number.isNaN(mtu) ? null : mtu;
};

/** The ipam object as stored: its known fields only, empty strings left out. */
function ipamOf(ipam: NonNullable<CreateInput['ipam']>): IpamView {
  return {
    ...(ipam.driver ? { driver: ipam.driver } : {}),
    ...(ipam.config
      ? { config: ipam.config.map(c => ({ ...(c.subnet ? { subnet: c.subnet } : {}), ...(c.gateway ? { gateway: c.gateway } : {}), ...(c.ipRange ? { ipRange: c.ipRange } : {}) })) }
      : {}),
  };
}

/** The subnets of the ipam config, each checked with its gateway and range (400 naming the field). */
function checkRanges(ipam: IpamView | null, enableIPv6: boolean): Block[] {
  const blocks: Block[] = [];
  for (const [i, c] of (ipam?.config ?? []).entries()) {
    const at = `ipam.config.${i}`;
    if (!c.subnet) {
      if (c.gateway || c.ipRange) throw invalidField(`${at}.subnet`, 'a gateway or an IP range needs a subnet');
      continue;
    }
    const subnet = parseField(`${at}.subnet`, () => parseBlock(c.subnet!));
    if (subnet.family === 6 && !enableIPv6) throw invalidField(`${at}.subnet`, 'an IPv6 subnet needs enableIPv6');
    if (c.gateway) {
      const gateway = parseField(`${at}.gateway`, () => parseAddress(c.gateway!));
      if (!contains(subnet, gateway)) throw invalidField(`${at}.gateway`, `${c.gateway} is not inside the subnet ${c.subnet}`);
    }
    if (c.ipRange) {
      const range = parseField(`${at}.ipRange`, () => parseBlock(c.ipRange!));
      if (!within(range, subnet)) throw invalidField(`${at}.ipRange`, `${c.ipRange} is not inside the subnet ${c.subnet}`);
    }
    const clash = blocks.findIndex(b => overlaps(b, subnet));
    if (clash >= 0) throw invalidField(`${at}.subnet`, `overlaps ipam.config.${clash}.subnet`);
    blocks.push(subnet);
  }
  return blocks;
}

/** CONFLICT when a subnet overlaps one a network on the host already uses (which network is not told: it may be another organization's). */
async function assertFree(docker: Docker, call: <T>(what: string, fn: () => Promise<T>) => Promise<T>, blocks: Block[]): Promise<void> {
  if (!blocks.length) return;
  const used = (await listNetworks(docker, call)).flatMap(n => (n.IPAM?.Config ?? []).map(c => c.Subnet).filter((s): s is string => !!s));
  for (const [i, block] of blocks.entries()) {
    for (const subnet of used) {
      let other: Block;
      try {
        other = parseBlock(subnet);
      } catch {
        continue;
      }
      if (overlaps(block, other)) {
        const field = `ipam.config.${i}.subnet`;
        throw new BerthError('CONFLICT', `${field}: overlaps an address range a network on this host already uses (${subnet})`, [{ path: field.split('.'), message: `${field}: overlaps ${subnet}` }]);
      }
    }
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** network.* for the current request's caller (request scope only). */
    networkRequests: NetworkRequests;
  }
}
