// Host access is the operator's to grant. A bind mount, a host/ingress/none network or a git
// repository read from this host's file system reaches past the container; each is off unless
// the config (`hostAccess`) allows it, and then only for the instance owner (the first admin) —
// not for whoever owns an organization, since any account may create one. Checked when a record
// is written (with the caller) and again when it deploys (the policy alone), so a record the
// policy now refuses fails its next deploy with the same message.
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BerthError, type BerthConfig, type Cradle, type Principal } from '@berth/core';
import { ORGANIZATION_LABEL, ORGANIZATION_NETWORK_PREFIX } from '@berth/plugin-hosts';

/** Where Berth's own code lives: no container may bind it, nor a parent of it. */
export const INSTALL_DIR = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/** Docker's own networks that put a container on the host's stack or outside every network. */
const HOST_NETWORKS = new Set(['host', 'ingress', 'none']);

/** A path with its symlinks resolved, as far as it exists (the rest appended as written). */
export function realPath(p: string): string {
  const absolute = path.resolve(p);
  let existing = absolute;
  const rest: string[] = [];
  while (!existsSync(existing) && existing !== path.dirname(existing)) {
    rest.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  let real = existing;
  try {
    real = realpathSync(existing);
  } catch {
    /* unreadable: compare as written */
  }
  return path.join(real, ...rest);
}

const within = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/** A refusal of the policy: 403 naming the field and what would allow it. */
export const hostAccessRefused = (field: string, message: string) => new BerthError('FORBIDDEN', `${field}: ${message}`, [{ path: field.split('.'), message: `${field}: ${message}` }]);

/** True for a git source read from this host: an absolute path or a file: URL. */
export const isLocalGitUrl = (url: string) => url.startsWith('/') || /^file:/i.test(url);

/** A network as the engine describes it (deploy time) or as a record names it (write time). */
export interface NetworkFacts {
  name: string;
  driver?: string;
  ingress?: boolean;
  /** Its labels as the engine answers them (deploy time). */
  labels?: Record<string, string>;
}

/** Whose workload joins: its organization, that organization's network, and the platform network (the instance operators'). */
export interface NetworkTenancy {
  organizationId: string;
  network: string;
  platformNetwork: string;
}

/** A refusal by ownership: 403 naming the field. */
const notYours = (field: string, network: string) =>
  new BerthError('FORBIDDEN', `${field}: the network ${network} is not this organization's (a workload joins only its organization's networks)`, [
    { path: field.split('.'), message: `${field}: the network ${network} is not this organization's` },
  ]);

export class HostAccess {
  readonly #cradle: { config: BerthConfig; accounts: Cradle['accounts']; hosts: Cradle['hosts'] };

  constructor(cradle: { config: BerthConfig; accounts: Cradle['accounts']; hosts: Cradle['hosts'] }) {
    this.#cradle = cradle;
  }

  get #config(): BerthConfig {
    return this.#cradle.config;
  }

  /** Why a bind of hostPath is refused by the policy (not by who asks), or null. */
  bindMountRefusal(hostPath: string, field = 'hostPath'): BerthError | null {
    const roots = this.#config.hostAccess.bindMountRoots;
    if (!roots.length) return hostAccessRefused(field, 'bind mounts are off on this instance (the operator allows them below listed directories with the config key hostAccess.bindMountRoots)');
    const real = realPath(hostPath);
    for (const own of [this.#config.dataDir, INSTALL_DIR].map(realPath)) {
      if (within(real, own) || within(own, real)) return hostAccessRefused(field, `${hostPath} is or contains Berth's own data or install directory, which no configuration allows to bind`);
    }
    if (!roots.map(realPath).some(root => within(real, root))) {
      return hostAccessRefused(field, `${hostPath} (${real} with links resolved) is not below a directory of the config key hostAccess.bindMountRoots (${roots.join(', ')})`);
    }
    return null;
  }

  /** Why attaching to this network is refused by the policy, or null. */
  networkRefusal(network: NetworkFacts, field = 'networkSwarm'): BerthError | null {
    const hostLike = HOST_NETWORKS.has(network.name.toLowerCase()) || network.driver === 'host' || network.driver === 'null' || network.ingress === true;
    if (!hostLike || this.#config.hostAccess.hostNetworks) return null;
    return hostAccessRefused(field, `the network ${network.name} (host, ingress or none) is off on this instance (allowed by the config key hostAccess.hostNetworks)`);
  }

  /**
   * Why joining this network is refused by ownership, or null: a workload joins its organization's
   * network and the networks labelled with its organization; the instance operators' organization
   * (whose network is the platform network) also the engine's unlabelled ones, which are this
   * machine's own; never another organization's.
   */
  tenancyRefusal(network: NetworkFacts, tenancy: NetworkTenancy, field = 'networkSwarm'): BerthError | null {
    if (network.name === tenancy.network) return null;
    const owner = network.labels?.[ORGANIZATION_LABEL];
    if (owner) return owner === tenancy.organizationId ? null : notYours(field, network.name);
    const operators = tenancy.network === tenancy.platformNetwork;
    if (network.name === tenancy.platformNetwork || network.name.startsWith(ORGANIZATION_NETWORK_PREFIX))
      return operators && network.name === tenancy.platformNetwork ? null : notYours(field, network.name);
    return operators ? null : notYours(field, network.name);
  }

  /** Why cloning this git URL is refused by the policy, or null. */
  localGitRefusal(url: string, field = 'customGitUrl'): BerthError | null {
    if (!isLocalGitUrl(url) || this.#config.hostAccess.localGit) return null;
    return hostAccessRefused(field, 'repositories on this host (file:// URLs and paths) are off on this instance (allowed by the config key hostAccess.localGit)');
  }

  /** Write time: the policy, then the caller — what the policy allows is the instance owner's alone. */
  async assert(principal: Principal, refusal: BerthError | null, field: string, what: string): Promise<void> {
    if (refusal) throw refusal;
    if (!(await this.#cradle.accounts.isInstanceOwner(principal.userId))) {
      throw hostAccessRefused(field, `only the instance owner (the first admin) may use ${what} (granted by the config key hostAccess)`);
    }
  }

  async assertBindMount(principal: Principal, hostPath: string, field = 'hostPath'): Promise<void> {
    await this.assert(principal, this.bindMountRefusal(hostPath, field), field, 'bind mounts');
  }

  async assertNetworks(principal: Principal, networks: readonly { Target?: string }[] | null | undefined, field = 'networkSwarm'): Promise<void> {
    if (!networks?.length) return;
    const hosts = this.#cradle.hosts;
    const tenancy = { organizationId: principal.organizationId, network: await hosts.networkOf(principal.organizationId), platformNetwork: hosts.platformNetwork };
    for (const [i, n] of networks.entries()) {
      if (!n.Target) continue;
      // By name now (the engine's labels are checked again at deploy): another organization's network, or the platform network outside the instance operators' organization.
      const named = n.Target === hosts.platformNetwork || n.Target.startsWith(ORGANIZATION_NETWORK_PREFIX);
      const notOurs = named ? this.tenancyRefusal({ name: n.Target }, tenancy, `${field}.${i}.Target`) : null;
      if (notOurs) throw notOurs;
      const refusal = this.networkRefusal({ name: n.Target }, `${field}.${i}.Target`);
      if (refusal || HOST_NETWORKS.has(n.Target.toLowerCase())) await this.assert(principal, refusal, `${field}.${i}.Target`, 'host, ingress and none networks');
    }
  }

  async assertGitUrl(principal: Principal, url: string | null | undefined, field = 'customGitUrl'): Promise<void> {
    if (url && isLocalGitUrl(url)) await this.assert(principal, this.localGitRefusal(url, field), field, 'repositories on this host');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The operator's host access policy (bind mounts, host networks, local git). */
    hostAccess: HostAccess;
  }
}
