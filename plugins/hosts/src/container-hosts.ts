// Where workloads run: the machine Berth runs on (a Docker engine in swarm mode with the platform
// network) or a server reached through a host provider. Plugins get engines and command runners
// from here, never build their own clients.
import type Docker from 'dockerode';
import type { EntityManager, HostConnection, HostServer } from '@berth/core';
import type { DefaultSshKeys } from './default-key.ts';
import type { WorkloadExists } from './platform-network.ts';

/** One machine as the hosts plugin hands it out: its engine and command runner (the plugin owns the connection). */
export type Host = Pick<HostConnection, 'engine' | 'run'>;

/** What an engine call needs of the hosts: the platform network and the error conversion. */
export type EngineCalls = Pick<ContainerHosts, 'platformNetwork' | 'call'>;

export interface ContainerHosts {
  /** The overlay network every workload and the proxy join (attachable, so plain containers can too): the config key platformNetwork. */
  readonly platformNetwork: string;
  /** The network the organization's workloads join: the platform network for the instance operators' organization (the first one), `berth-org-<short id>` for any other. */
  networkOf(organizationId: string): Promise<string>;
  /** networkOf, made sure to exist on the engine (created labelled with the organization; CONFLICT when a network of that name is not the organization's). */
  ensureNetworkOf(docker: Docker, organizationId: string): Promise<string>;
  /** The networks of this instance's organizations on the engine: the proxy joins each (another Berth's on the same engine are left out). */
  organizationNetworks(docker: Docker): Promise<string[]>;
  /** The machine of `serverId` (NOT_FOUND when no server record has it), or this one for null; its engine in swarm mode with the platform network; one connection per machine, made on first use. */
  of(serverId: string | null): Promise<Host>;
  /**
   * The machine's engine as it is, not prepared (swarm mode not initialised, a worker not refused):
   * for what only reads or changes swarm membership — node listings and joins (the cluster plugin),
   * the reachability probe, monitoring's reads — where preparing would make a server that is about
   * to join a swarm (or a build server, or one not set up yet) the manager of its own.
   */
  asIs(serverId: string | null): Promise<Docker>;
  /**
   * DOCKER_HOST for a program Berth runs on this machine against the engine of `serverId`: a local
   * socket forwarding to it over the server's connection (undefined for null: the program's own
   * environment reaches this machine's engine).
   */
  dockerHost(serverId: string | null): Promise<string | undefined>;
  /**
   * Makes sure the engine of `serverId` has `image` before a service uses it: present already, or
   * copied from the local engine (save | load over the connection); 'absent' when neither has it
   * (the engine then pulls it).
   */
  provideImage(serverId: string | null, image: string, signal?: AbortSignal): Promise<'present' | 'copied' | 'absent'>;
  /** This machine's engine, prepared: `(await of(null)).engine()`; only for what is this machine's own (the allow-list in plugins/hosts/test/local-call-sites.test.ts). */
  local(): Promise<Docker>;
  /** Runs an engine call and turns engine failures into domain errors (404 → NOT_FOUND, 409 → CONFLICT, else a logged 500). */
  call<T>(what: string, fn: () => Promise<T>): Promise<T>;
  /** Runs once, in the background, when the local engine is first reached (not at boot). */
  afterReady(task: (docker: Docker) => Promise<void>): void;
  /** At boot: a changed platformNetwork is refused while this instance's workloads sit on the former one. */
  checkNetworkAtBoot(exists: WorkloadExists, em: EntityManager): Promise<void>;
  /**
   * Before a service of `organizationId` is made or updated on the machine of `serverId`: the nodes
   * it may use carry its label (this machine's shared nodes; a server's own node is labelled when
   * its engine is prepared). Idempotent; asks this machine's engine once per organization.
   */
  ensurePlacement(serverId: string | null, organizationId: string): Promise<void>;
  /** An organization was created: this machine's shared nodes get its label (when the engine has been reached). */
  organizationAdded(organizationId: string): Promise<void>;
  /** An organization was removed: its label goes from this machine's swarm nodes. */
  organizationRemoved(organizationId: string): Promise<void>;
  /** Closes a server's connection (its record changed or went away); the next of() connects again. */
  forget(serverId: string): Promise<void>;
  /** Each organization's default SSH key (settings.saveSSHPrivateKey), which its servers without a key of their own connect with. */
  readonly defaultKeys: DefaultSshKeys;
}

/** A server record as the directory answers it: the connection details, and whose it is and which key it names. */
export interface DirectoryServer extends HostServer {
  /** Its organization (the default key used when it names no key is that organization's). */
  organizationId?: string;
  /** The sshKey record it names; null: none, the organization's default key applies. Absent: the directory does not say (no fallback). */
  sshKeyId?: string | null;
}

/** The server records, as the hosts plugin reads them (offered by the plugin that keeps them). */
export interface HostServerDirectory {
  /** The server's connection details (its key decrypted), or null when there is no such server. */
  server(serverId: string): Promise<DirectoryServer | null>;
  /** The organization a server belongs to (null: no such server); a workload names only its own organization's servers. */
  organizationOf(serverId: string): Promise<string | null>;
}

/** Where a workload runs: its organization and host (null: this machine). */
export interface NetworkJoiner {
  organizationId: string;
  serverId: string | null;
}

/** The organizations' user networks (network.*) as workloads join them: the workload kit's `userNetworks`, offered by the plugin that keeps them. */
export interface UserNetworkDirectory {
  /**
   * The engine names of the networks `ids` name, in order, each checked for a workload of `joiner`: a record of its
   * organization (404 otherwise) on its host, an overlay when a swarm service joins (`swarm`), attachable when a plain
   * container does (400 otherwise); with `docker` (deploy time), its network there carrying the record's labels
   * (400 when gone, 409 when the name is another network's). Every refusal names `${field}.<index>` and the id.
   */
  joinable(ids: readonly string[], joiner: NetworkJoiner, opts: { field: string; swarm: boolean; docker?: Docker }, em: EntityManager): Promise<string[]>;
}

declare module '@berth/core' {
  interface Cradle {
    /** Machines that run workloads (connected on first use); from the hosts plugin. */
    hosts: ContainerHosts;
    /** The server records the hosts plugin connects to; absent until a plugin keeps them. */
    hostServers: HostServerDirectory;
  }
}
