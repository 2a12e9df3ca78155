// Records that hang off a workload and shape its service: mounts (the mounts plugin),
// published ports (the port plugin) and domains (the domain plugin). Kinds read them through these directories when they
// deploy and when they answer `one`; the owners of the records check that the workload
// exists through WorkloadRegistry.owner(), and offer them only to the kinds whose
// capabilities say so. Also the seams of the plugins built on this kit that a workload meets
// (its deployments, its push hook, the server and registries it names): each declared here with
// what the kit needs of it, and filled by its plugin.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TSchema } from 'typebox';
import type { DeploymentService, ProxyRoute } from '@berth/core';
import type { HostServerDirectory, UserNetworkDirectory } from '@berth/plugin-hosts';
import type Docker from 'dockerode';
import type { WorkloadRef } from './registry.ts';
import type { WorkloadService } from './services.ts';

export interface MountRecord {
  mountId: string;
  type: 'bind' | 'volume' | 'file';
  hostPath: string | null;
  volumeName: string | null;
  /** The mount existed before mount volumes were labelled: its volume, unlabelled, is its own. */
  volumeAdopted: boolean;
  /** For file mounts: the file's path under the workload's files directory. */
  filePath: string | null;
  content: string | null;
  mountPath: string;
  /** The owning workload's kind (its wire name) and id. */
  serviceType: string;
  serviceId: string;
}

export interface PortRecord {
  portId: string;
  publishedPort: number;
  publishMode: 'ingress' | 'host';
  targetPort: number;
  protocol: 'tcp' | 'udp';
  applicationId: string;
}

/** Registered as `mounts` by the mounts plugin. */
export interface MountDirectory {
  /** The workloads' mounts, grouped by workload id. */
  forServices(kind: string, serviceIds: string[], em: EntityManager): Promise<Map<string, MountRecord[]>>;
  /** The mounts as `<kind>.one` answers them: with the peer's `<kind>Id` fields. */
  views(records: MountRecord[]): Record<string, unknown>[];
  /** The schema of one of those views (made once every plugin is set up). */
  viewSchema(): TSchema;
  /** Deletes the workload's mounts (when the workload is deleted). */
  removeForService(kind: string, serviceId: string, em: EntityManager): Promise<void>;
  /** CONFLICT naming the field when a named volume is another organization's (its mount, or its workload's by name); answers whether the organization's own records claim it. */
  assertOwnVolume(name: string, workload: { organizationId: string; serverId: string | null }, em: EntityManager, field?: string): Promise<boolean>;
}

/** Registered as `ports` by the port plugin. */
export interface PortDirectory {
  forApplications(applicationIds: string[], em: EntityManager): Promise<Map<string, PortRecord[]>>;
  /** The schema of a PortRecord as the API answers it. */
  viewSchema(): TSchema;
  removeForApplication(applicationId: string, em: EntityManager): Promise<void>;
}

/** Registered as `backupDirectory` by the backups plugin. */
export interface BackupDirectory {
  /** Deletes the workload's backup records (when the workload is deleted); the files stay in their destinations. */
  removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void>;
  /** The workload's backups as `<kind>.one` lists them (backup.one's fields), oldest first. */
  viewsFor(kind: string, id: string, em: EntityManager): Promise<Record<string, unknown>[]>;
  /** The schema of one of those views (made once every plugin is set up). */
  viewSchema(): TSchema;
}

/** Registered as `scheduleDirectory` by the schedule plugin: the schedules that run in a workload's container or on a server. */
export interface ScheduleDirectory {
  /** Deletes the workload's schedules and their runs (when the workload is deleted). */
  removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void>;
  /** Deletes the server's schedules and their runs (when the server is deleted). */
  removeForServer(serverId: string, em: EntityManager): Promise<void>;
}

/** Registered as `domains` by the domain plugin: what a workload serves through the proxy. */
export interface DomainDirectory {
  /** The workload's domains, redirects and basic-auth users as its `one` lists them, oldest first. */
  forService(kind: string, id: string, em: EntityManager): Promise<{ domains: Record<string, unknown>[]; redirects: Record<string, unknown>[]; security: Record<string, unknown>[] }>;
  /** The schemas of one of each of those views. */
  viewSchemas(): { domains: TSchema; redirects: TSchema; security: TSchema };
  /** Deletes the workload's domains, redirects and basic-auth users and takes its routes off the proxy (when the workload is deleted). */
  removeForService(workload: WorkloadRef, em: EntityManager): Promise<void>;
  /** The workload's domains as the proxy serves them (a kind that rewrites its own file for the proxy reads them). */
  routesOf?(workload: WorkloadRef, em: EntityManager): Promise<ProxyRoute[]>;
  /** Stores a domain of a service that is not a workload of the registry (a preview) and applies its routes; answers its domainId. */
  attach?(owner: WorkloadRef, domain: AttachedDomain, em: EntityManager): Promise<string>;
  /** Names the owner of the domains attached under `kind`, so that domain.update and domain.delete apply their routes at once. */
  ownsAttached?(kind: string, find: (id: string, em: EntityManager) => Promise<WorkloadRef | null>): void;
}

/** Registered as `workloadDeployments` by the deployment plugin (its `deployments`): the kinds' runs and their records. */
export type WorkloadDeployments = Pick<DeploymentService, 'register' | 'viewSchema' | 'cancelFor' | 'removeFor'>;

/** Registered as `workloadHooks` by the deploy-hook plugin (its `deployHooks`). */
export interface WorkloadHooks {
  /** Removes the webhook Berth registered on the workload's repository (before the workload is deleted). */
  removeWebhook(kind: string, id: string, em: EntityManager): Promise<void>;
  /** What became of the push webhook of the workload's linked repository (registered where, or why none), or null when none was asked for. */
  webhookRegistration(kind: string, id: string, em: EntityManager): Promise<string | null>;
}

/** Registered as `workloadPatches` by the patch plugin: the files a workload's patches write or delete in its checkout before the build. */
export interface WorkloadPatches {
  /** Applies the workload's enabled patches to its fresh checkout, in order of their paths; throws naming the file of the first that fails. */
  apply(workload: { kind: string; id: string }, checkoutDir: string, io: { em: EntityManager; log(line: string): void }): Promise<void>;
  /** Deletes the workload's patches and its patch checkout (when the workload is deleted). */
  removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void>;
}

/** A release that ran: what WorkloadRollbacks.keep stores to roll back to. */
export interface Release {
  workload: { kind: string; id: string; organizationId: string; serverId: string | null; appName: string };
  /** The deployment that rolled it out. */
  deploymentId: string;
  /** The service as it was rolled out (its image the reference it ran). */
  service: WorkloadService;
  /** The engine that runs it (the image is kept there). */
  docker: Docker;
  /** The workload's rollback registry when rollbackActive is on: the image is pushed there, so any node can pull it. */
  rollbackRegistryId: string | null;
}

/** Registered as `workloadRollbacks` by the rollback plugin: the releases a workload keeps to roll back to. */
export interface WorkloadRollbacks {
  /** Keeps a successful release (its image under a rollback tag, or pushed to the rollback registry) and lets the oldest beyond the configured count go. */
  keep(release: Release, io: { em: EntityManager; signal: AbortSignal; log(line: string): void }): Promise<void>;
  /** The service a rollback deployment rolls out (its registry credentials read now), and the release's number; throws when the release is gone. */
  release(rollbackId: string, workload: { kind: string; id: string }, em: EntityManager): Promise<{ service: WorkloadService; version: number }>;
  /** Deletes the workload's releases and their rollback tags (when the workload is deleted). */
  removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void>;
  /** The image references kept as rollback targets on a host (null: this machine), whoever's: a cleanup leaves them. */
  keptImages(serverId: string | null, em: EntityManager): Promise<Set<string>>;
  /** The releases these deployments made, by deployment id, as deployment.allByType answers them (its `rollback`). */
  forDeployments(deploymentIds: string[], organizationId: string, em: EntityManager): Promise<Map<string, RollbackEntry>>;
}

/** A kept release as the API answers it (the peer's rollback row; fullContext without secrets). */
export interface RollbackEntry {
  rollbackId: string;
  deploymentId: string;
  version: number;
  image: string;
  createdAt: string;
  fullContext: Record<string, unknown>;
}

/** Registered as `workloadServers` by the server plugin (its `servers`): the remote servers a workload names (organizationOf: the placement check). */
export interface WorkloadServers extends Pick<HostServerDirectory, 'organizationOf'> {
  /** The server a workload's serverId names, as the workload's answers join it; null without one or for another organization's. */
  relation(serverId: unknown, organizationId: string, em: EntityManager): Promise<Record<string, unknown> | null>;
  /** The schema of that relation. */
  relationSchema(): TSchema;
  /** The organization's servers (the swarm's nodes are looked for among them). */
  forPermissions(organizationId: string, em: EntityManager): Promise<{ serverId: string }[]>;
}

/** Registered as `workloadRegistries` by the registry plugin (its `registries`): the registries a workload names. */
export interface WorkloadRegistries {
  /** The registry a workload's registry id field names (no password); null without one or for another organization's. */
  relation(registryId: unknown, organizationId: string, em: EntityManager): Promise<Record<string, unknown> | null>;
  /** The schema of that relation. */
  relationSchema(): TSchema;
}

/** A domain another plugin gives its own service (a preview's): routed to owner.appName on port. */
export interface AttachedDomain {
  host: string;
  path: string;
  port: number;
  https: boolean;
  certificateType: 'letsencrypt' | 'none' | 'custom';
  customCertResolver: string | null;
  domainType: string;
  previewDeploymentId: string | null;
}

declare module '@berth/core' {
  interface Cradle {
    /** From the backups plugin (absent when it is disabled). */
    backupDirectory: BackupDirectory;
    /** From the domain plugin (absent when it is disabled). */
    domains: DomainDirectory;
    /** From the mounts plugin (absent when it is disabled). */
    mounts: MountDirectory;
    /** From the port plugin (absent when it is disabled). */
    ports: PortDirectory;
    /** From the schedule plugin (absent when it is disabled). */
    scheduleDirectory: ScheduleDirectory;
    /** From the deployment plugin (absent when it is disabled). */
    workloadDeployments: WorkloadDeployments;
    /** From the deploy-hook plugin (absent when it is disabled). */
    workloadHooks: WorkloadHooks;
    /** From the patch plugin (absent when it is disabled). */
    workloadPatches: WorkloadPatches;
    /** From the rollback plugin (absent when it is disabled). */
    workloadRollbacks: WorkloadRollbacks;
    /** From the registry plugin (absent when it is disabled). */
    workloadRegistries: WorkloadRegistries;
    /** From the server plugin (absent when it is disabled). */
    workloadServers: WorkloadServers;
    /** From the network plugin (absent when it is disabled): the user networks a workload's networkIds name. */
    userNetworks: UserNetworkDirectory;
  }
}
