// The registry of workload kinds. A kind (application, compose, each database kind, a third
// party's) registers itself once — its name on the wire, its id field, its list key, what it
// supports, how its records are found, listed and removed, and its deployer — and every list
// of kinds elsewhere (deployment targets, mounts' owners, environment views, appName checks,
// cascading deletes) is derived from here. Nothing outside a kind's own package names it.
import type { Readable, Writable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import Type from 'typebox';
import { conflict, notFound, optionalService, type CheckoutSource, type Cradle, type Deployer, type TSchema } from '@berth/core';
import type { CheckoutIo } from './lifecycle.ts';
import { NotServedList, peerListKeys } from './relations.ts';
import { checkServiceName } from './swarm/service-spec.ts';
import { readSummaries, summarySource } from './summaries.ts';
import { notOurs, ownedBy } from './owners.ts';

/** What a kind supports besides running: other plugins offer their operations to the kinds that say so. */
export interface WorkloadCapabilities {
  /** Bind, volume and file mounts (the mounts plugin). */
  mounts: boolean;
  /** Published ports of the service (the port plugin). */
  ports: boolean;
  /** Domains behind the proxy (the domains plugin). */
  domains: boolean;
  /** Scheduled backups (the backups plugin). */
  backups: boolean;
}

/** One workload, as other plugins need to see it (mounts, ports, domains, deployments). */
export interface WorkloadRef {
  /** The kind's wire name. */
  kind: string;
  id: string;
  organizationId: string;
  environmentId: string;
  /** The Swarm service name. */
  appName: string;
  /** The name its owner gave it. */
  name: string;
  serverId: string | null;
}

/** What one backup or restore is of: a database of the workload (and, for kinds that run several services, which service runs it and what engine it is). */
export interface BackupTarget {
  /** The database inside (null = the record's own). */
  databaseName: string | null;
  /** The service of the workload that runs it (kinds with `backupType`); null otherwise. */
  serviceName: string | null;
  /** The engine: a database driver's kind (the backup's databaseType). */
  databaseType: string;
}

/** How a kind with the `backups` capability hands its data to the backups plugin: streams, run inside its running container. */
export interface BackupSource {
  /** The suffix of its `backup.manualBackup<Suffix>` operation (Postgres, MySql, Compose...). */
  readonly procedureSuffix: string;
  /** The backupType of its backups when its databases live in its services (compose: the engine is the backup's databaseType); absent = the kind is the database (backupType "database"). */
  readonly backupType?: string;
  /** The databaseTypes it can back up (the engines it finds in its services); absent = its own kind only. */
  engines?(): string[];
  /** Streams a dump of the target into `out`, which it ends; rejects naming the failure (not running, the program's error). */
  dump(id: string, target: BackupTarget, out: Writable, io: BackupIo): Promise<void>;
  /** Restores the dump read from `input` into the target (a new databaseName is created first where the driver can). */
  restore(id: string, target: BackupTarget, input: Readable, io: BackupIo): Promise<void>;
  /** Restores the dump into a throwaway container of the target's image and answers the driver's inventory of it (tables and row counts; '' when the kind has none); rejects when the restore fails. */
  verify?(id: string, target: BackupTarget, input: Readable, io: BackupIo): Promise<string>;
}

export interface BackupIo {
  em: EntityManager;
  signal?: AbortSignal;
  log?(line: string): void;
}

export interface RemoveOptions {
  /** Also delete the named data volumes (a kept volume stays labelled with its former owner). */
  volumes: boolean;
}

/** See WorkloadKind.listSource. */
export interface ListSource {
  entity: unknown;
  json?: string;
}

/** A workload that deploys from a push, as the hooks plugin sees it. */
export interface PushTarget {
  workload: WorkloadRef;
  /** The record's API fields a push is compared with: sourceType, the branch fields of each source, autoDeploy, triggerType, watchPaths, dockerImage. */
  fields: Record<string, unknown>;
  /** The secret deliveries to its refresh-token URL must be signed with; null = unsigned deliveries are taken. */
  webhookSecret: string | null;
  /** The token of its hook URL (a webhook Berth registers points there). */
  refreshToken: string | null;
}

/** How a kind that deploys from a repository receives pushes (the deploy-hook plugin serves its URL). */
export interface PushSource {
  /** Where its refresh-token hook is below /api/deploy/ ('' = /api/deploy/{refreshToken}, 'x' = /api/deploy/x/{refreshToken}). */
  readonly hookPath: string;
  /** The workload whose refreshToken this is, of any organization. */
  byRefreshToken(refreshToken: string, em: EntityManager): Promise<PushTarget | null>;
  /** The workload with this id, of any organization. */
  byId(id: string, em: EntityManager): Promise<PushTarget | null>;
  /** The workloads of any organization deploying from `sourceType` whose connection field (githubId...) is one of `connectionIds` (a GitHub App's push finds them). */
  byConnection(sourceType: string, connectionField: string, connectionIds: string[], em: EntityManager): Promise<PushTarget[]>;
  /** Sets the secret its hook's deliveries must be signed with (a webhook Berth registers is given one). */
  setWebhookSecret(id: string, secret: string, em: EntityManager): Promise<void>;
  /** Queues a deployment for a push (title: the commit message, description: the commit); answers its id. */
  deploy(workload: WorkloadRef, run: { title: string; description: string | null; checkout?: string | null }, em: EntityManager): Promise<string>;
}

export interface WorkloadKind {
  /** The name on the wire: deployment targetType, mounts' serviceType, the namespace of a database kind. */
  readonly kind: string;
  /** The record's id field on the wire (applicationId, postgresId...): `<kind>Id` fields elsewhere are derived from it. */
  readonly idField: string;
  /** The key under which environment and project reads list this kind's workloads (applications, postgres...). */
  readonly listKey: string;
  /** What users call it, for messages ("Application", "PostgreSQL"). */
  readonly label: string;
  readonly capabilities: Readonly<WorkloadCapabilities>;
  /** How it deploys from pushes, when it does. */
  readonly push?: PushSource;
  /** Its dump and restore, when capabilities.backups. */
  readonly backups?: BackupSource;
  /** Runs its deployments on the deploy queue (registered with the deployment plugin under `kind`). */
  readonly deployer: Deployer;
  /** The workload with this id, of any organization. */
  find(id: string, em: EntityManager): Promise<WorkloadRef | null>;
  /** The workload of this kind named appName on the host (serverId null = this host). */
  findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null>;
  /** The schema of `record`, when the kind answers it. */
  readonly recordSchema?: TSchema;
  /** The stored record with every API field (credentials included), as the peer joins it into another record's read (backup.one); null when gone. */
  record?(id: string, em: EntityManager): Promise<Record<string, unknown> | null>;
  /** The workloads of the given environments. */
  inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]>;
  /** The schema of one entry of `list` (see workloadSummary). */
  readonly listItem: TSchema;
  /**
   * Where the kind's records are, for listing: the ORM entity, whose properties of the listed
   * fields' names (the id field: its primary key) are columns, and optionally the JSON property
   * that holds the listed fields that are not (a missing key: null). Environment and project reads
   * then list the kind in one query with the other kinds (summaries.ts) instead of calling `list`.
   */
  readonly listSource?: ListSource;
  /** The workloads of the given environments as environment reads list them, grouped by environmentId (no secrets). */
  list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>>;
  /** Where the proxy sends a domain's requests for one service of the workload (host:port), when the kind runs several (compose); absent = `tasks.<appName>`. */
  routeUpstream?(workload: WorkloadRef, serviceName: string, port: number, em: EntityManager): Promise<string | null>;
  /** Removes the workload and all it has on the host and in other plugins (service, files, mounts, ports, deployments), then its record. */
  remove(workload: WorkloadRef, em: EntityManager, options: RemoveOptions): Promise<void>;
  /**
   * Fetches the workload's repository into the empty directory workDir as its deploys do, outside a
   * run; null when its source is no repository. Present on the kinds whose deploys build a checkout
   * and apply the workload's file patches to it first (patch.*).
   */
  checkout?(id: string, workDir: string, io: CheckoutIo): Promise<CheckoutSource | null>;
}

const WIRE_NAME = /^[a-z][a-zA-Z0-9]{0,30}$/;

export class WorkloadRegistry {
  readonly #kinds = new Map<string, WorkloadKind>();
  readonly #cradle: () => Cradle;

  constructor({ cradle }: { cradle: () => Cradle }) {
    this.#cradle = cradle;
  }

  /** Adds a kind and hands its deployer to the deploy queue; a second kind of the same name, id field or list key is refused. */
  register(kind: WorkloadKind): void {
    if (!WIRE_NAME.test(kind.kind)) throw new Error(`Invalid workload kind "${kind.kind}": a letter, then letters and digits`);
    for (const other of this.#kinds.values()) {
      if (other.kind === kind.kind || other.idField === kind.idField || other.listKey === kind.listKey) {
        throw new Error(`Workload kind "${kind.kind}" clashes with the registered kind "${other.kind}" (name, id field or list key)`);
      }
    }
    this.#kinds.set(kind.kind, kind);
    optionalService(this.#cradle(), 'workloadDeployments')?.register(kind.deployer);
  }

  /** Every registered kind, in registration order. */
  kinds(): WorkloadKind[] {
    return [...this.#kinds.values()];
  }

  /** The kinds that support a capability (e.g. the kinds mounts may belong to). */
  supporting(capability: keyof WorkloadCapabilities): WorkloadKind[] {
    return this.kinds().filter(k => k.capabilities[capability]);
  }

  kind(name: string): WorkloadKind | undefined {
    return this.#kinds.get(name);
  }

  /** The workload if it exists in the organization; NOT_FOUND otherwise (also for a kind nobody serves). */
  async owner(kind: string, id: string, organizationId: string, em: EntityManager): Promise<WorkloadRef> {
    const k = this.#kinds.get(kind);
    const found = await k?.find(id, em);
    if (!found || found.organizationId !== organizationId) throw notFound(k?.label ?? kind);
    return found;
  }

  /** Whichever workload of any kind holds appName on the host, so service names never collide. */
  async byAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
    for (const k of this.#kinds.values()) {
      const found = await k.findByAppName(appName, serverId, em);
      if (found) return found;
    }
    return null;
  }

  /**
   * Refuses a serverId that names no server of the organization (NOT_FOUND naming the field): the
   * server records' plugin answers it (`workloadServers`).
   */
  async assertServer(serverId: string, organizationId: string): Promise<void> {
    const directory = optionalService(this.#cradle(), 'workloadServers');
    const owner = directory ? await directory.organizationOf(serverId) : null;
    if (owner !== organizationId) throw notFound(`Server ${serverId}`);
  }

  /** The appName check of one organization's records: a new record's serverId must first name one of its servers. */
  placement(organizationId: string): (appName: string, serverId: string | null, em: EntityManager, self?: string) => Promise<void> {
    return async (appName, serverId, em, self) => {
      if (serverId !== null && self === undefined) await this.assertServer(serverId, organizationId);
      await this.assertAppNameFree(appName, serverId, em, self);
    };
  }

  /**
   * Refuses (409) an appName that another of Berth's workloads holds on the host, or that names
   * a service on the host which is not Berth's for the record `self` (a new record has none).
   */
  async assertAppNameFree(appName: string, serverId: string | null, em: EntityManager, self?: string): Promise<void> {
    checkServiceName(appName, 'appName');
    const holder = await this.byAppName(appName, serverId, em);
    if (holder && holder.id !== self) throw conflict(`appName "${appName}" is already used on this host`);
    const hosts = this.#cradle().hosts;
    // A control plane whose engine (or the server's) is down can still keep records: every deploy checks the name again.
    const docker = await hosts
      .of(serverId)
      .then(h => h.engine())
      .catch(() => null);
    if (!docker) return;
    const labels = await hosts.call(`inspect service ${appName}`, () =>
      docker
        .getService(appName)
        .inspect()
        .then(
          (s: { Spec?: { Labels?: Record<string, string> } }) => s.Spec?.Labels ?? {},
          (e: { statusCode?: number }) => (e.statusCode === 404 ? null : Promise.reject(e)),
        ),
    );
    if (labels && !ownedBy(labels, self ?? '')) throw notOurs('service', appName);
  }

  /** The peer's list keys no registered kind serves (always empty lists). */
  #unservedListKeys(): string[] {
    const kinds = this.kinds();
    return peerListKeys.filter(key => !kinds.some(k => k.listKey === key));
  }

  /** Empty lists under every kind's list key, and under the peer's keys no kind serves yet. */
  empty(): Record<string, Record<string, unknown>[]> {
    return Object.fromEntries([...this.kinds().map(k => k.listKey), ...this.#unservedListKeys()].map(key => [key, []]));
  }

  /** The schemas of the lists environment and project reads carry: one per kind, and the peer's others (always empty). */
  listSchemas(): Record<string, TSchema> {
    return Object.fromEntries([...this.kinds().map(k => [k.listKey, Type.Array(k.listItem)]), ...this.#unservedListKeys().map(key => [key, NotServedList(key)])]);
  }

  /** Every environment's workloads, one list per kind: the kinds with a listEntity in one query, the others through their own list. */
  async collect(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, Record<string, unknown>[]>>> {
    const out = new Map(environmentIds.map(id => [id, this.empty()]));
    if (!environmentIds.length) return out;
    const kinds = [...this.#kinds.values()];
    const sources = kinds.map(k => summarySource(k, em)).filter(s => s !== null);
    const read = await readSummaries(sources, environmentIds, em);
    for (const k of kinds) {
      for (const [environmentId, items] of read.get(k) ?? (await k.list(environmentIds, em))) out.get(environmentId)?.[k.listKey]?.push(...items);
    }
    return out;
  }

  /** Removes every workload of the environments through its kind (before the environments themselves go). */
  async removeIn(environmentIds: string[], em: EntityManager, options: RemoveOptions = { volumes: false }): Promise<number> {
    if (!environmentIds.length) return 0;
    let removed = 0;
    for (const k of this.#kinds.values()) {
      for (const workload of await k.inEnvironments(environmentIds, em)) {
        await k.remove(workload, em, options);
        removed++;
      }
    }
    return removed;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The registry of workload kinds; from the workloads plugin. */
    workloads: WorkloadRegistry;
  }
}
