// One lifecycle for every workload kind on the deploy queue: stop (scale to 0 → idle), start
// (scale back to the record's replicas → done), reload (replace the tasks → done), settle (a
// failed run → error; a cancelled one → done or idle, whichever the service says), and removal
// of the service. A kind supplies only what is its own: how its record is read, its status
// setter, its replicas, its deploy actions (deploy, redeploy, rebuild...), and what "ready"
// means after start and reload (databases wait for the driver's readiness check).
//
// Every engine call goes through the runner with the record's id as owner, so a service of the
// record's appName that is not Berth's for this very record is refused (409) and left alone.
import type Docker from 'dockerode';
import { setTimeout as sleep } from 'node:timers/promises';
import { optionalService, type CheckoutSource, type Cradle, type Deployer, type DeploymentRun, type EntityManager, type SourceRequest } from '@berth/core';
import type { ContainerHosts } from '@berth/plugin-hosts';
import { ownerLabels, type Owner } from './owners.ts';
import { SwarmRunner, type Admit, type Owned, type WaitOptions } from './swarm/runner.ts';
import { checkNodesCanPull, type NodeEngine } from './swarm/pull-check.ts';
import { admitWorkload } from './swarm/host-access.ts';
import { volumePin } from './swarm/volume-pin.ts';
import { joinableNetworks } from './user-networks.ts';
import type { WorkloadService } from './services.ts';

/** What fetching a record's source outside a run takes (patch.ensureRepo's checkout). */
export interface CheckoutIo {
  em: EntityManager;
  signal: AbortSignal;
  log(line: string): void;
  /** A value never to show (a key, a token). */
  redact(value: string): void;
}

/** What the lifecycle reads of a record. */
export interface LifecycleRecord {
  id: string;
  appName: string;
  organizationId: string;
  /** The server it runs on; null: this machine. */
  serverId: string | null;
}

/** The engine a run works on: the record's server's, or this machine's. */
export interface Engine {
  docker: Docker;
  hosts: ContainerHosts;
  swarm: SwarmRunner;
  /** The record's server; null for this machine. */
  serverId: string | null;
  /** For ensureImage on a server: copies an image the server lacks from the local engine (undefined on this machine). */
  fallback?: (image: string) => Promise<boolean>;
}

/**
 * The engines of the swarm's nodes, found on first use: the deploying engine, this machine's and
 * those of the organization's servers, each asked its swarm node id (5 s at most each).
 */
function nodeEngines(cradle: Cradle, deploying: Docker, record: LifecycleRecord): NodeEngine {
  let found: Promise<Map<string, Docker>> | undefined;
  const find = async () => {
    const servers = optionalService(cradle, 'workloadServers');
    const ids = servers ? (await servers.forPermissions(record.organizationId, cradle.orm.em.fork() as EntityManager)).map(s => s.serverId) : [];
    const engines: Promise<Docker>[] = [Promise.resolve(deploying), ...[null, ...ids].filter(id => id !== record.serverId).map(id => cradle.hosts.asIs(id))];
    const byNode = new Map<string, Docker>();
    await Promise.all(
      engines.map(async engine => {
        // A server that does not answer (connecting included) within 5 s is left out: its node is logged as not checked.
        const asked = engine.then(async docker => ({ docker, info: (await docker.info()) as { Swarm?: { NodeID?: string } } }));
        const found = await Promise.race([asked.catch(() => null), sleep(5000, null, { ref: false })]);
        if (found?.info.Swarm?.NodeID && !byNode.has(found.info.Swarm.NodeID)) byNode.set(found.info.Swarm.NodeID, found.docker);
      }),
    );
    return byNode;
  };
  return async nodeId => (await (found ??= find())).get(nodeId) ?? null;
}

/** A log's lines containing `search` (any case); the whole log without one. */
export function linesContaining(text: string, search?: string | null): string {
  if (!search) return text;
  const needle = search.toLowerCase();
  return text
    .split('\n')
    .filter(l => l.toLowerCase().includes(needle))
    .join('\n');
}

export abstract class WorkloadLifecycle<Row> implements Deployer {
  /** The kind's wire name (deployment targetType, berth.kind label). */
  abstract readonly targetType: string;
  /** What the record is called in messages (e.g. "PostgreSQL database"). */
  protected abstract readonly noun: string;
  protected readonly cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.cradle = cradle;
  }

  /** The record of a run (null when it was deleted meanwhile). */
  protected abstract load(id: string, em: EntityManager): Promise<Row | null>;
  /** The record's id, appName and organization. */
  protected abstract identify(row: Row): LifecycleRecord;
  /** How many replicas the record runs when started. */
  protected abstract replicas(row: Row): number;
  /** Stores the record's status (running, done, idle, error). */
  protected abstract setStatus(id: string, status: string, em: EntityManager): Promise<void>;
  /** The kind's own actions (deploy, redeploy, rebuild...): anything but stop, start and reload; throws for an unknown one. */
  protected abstract deploy(row: Row, action: string, run: DeploymentRun, engine: Engine): Promise<void>;

  /** Where the kind's records keep their Swarm settings (a jsonb `settings` column): the volume pin is written there. Absent: no placementSwarm. */
  protected readonly settingsTable?: { table: string; idColumn: string };

  /**
   * On a multi-node swarm, a workload with mounts pinned to its node (swarm/volume-pin.ts): the
   * constraint is stored in the record's placementSwarm, where the user sees it, before the service
   * is made with it.
   */
  protected async pinned(row: Row, service: WorkloadService, run: DeploymentRun, engine: Engine): Promise<WorkloadService> {
    const where = this.settingsTable;
    if (!where) return service;
    const placement = await volumePin(engine.docker, service, line => run.log(line));
    if (!placement) return service;
    await run.em.execute(`update "${where.table}" set "settings" = jsonb_set("settings", '{placementSwarm}', ?::jsonb) where "${where.idColumn}" = ?`, [
      JSON.stringify(placement),
      this.identify(row).id,
    ]);
    return { ...service, placement };
  }

  /**
   * The networks the record's service joins besides its organization's: its networkSwarm, then the
   * user networks its networkIds name (network.*), each checked on the engine of the record's host
   * (the deploy fails naming the id, before the service is touched, when one is not joinable).
   */
  protected async networksOf(row: Row, settings: Record<string, unknown>, run: DeploymentRun, engine: Engine): Promise<WorkloadService['networks']> {
    const own = (settings.networkSwarm as WorkloadService['networks']) ?? null;
    const joiner = { organizationId: this.identify(row).organizationId, serverId: engine.serverId };
    const names = await joinableNetworks(this.cradle(), settings.networkIds, joiner, { field: 'networkIds', swarm: true, docker: engine.docker }, run.em);
    if (!names.length) return own;
    run.log(`Joining the networks ${names.join(', ')}`);
    return [...(own ?? []), ...names.filter(n => !own?.some(o => o.Target === n)).map(Target => ({ Target }))];
  }

  /** Waits after start and reload until the workload serves; nothing to wait for by default. */
  protected async ready(_row: Row, _run: DeploymentRun, _engine: Engine): Promise<void> {}

  /**
   * The engine of the record's host (its server's, or this machine's) and a runner that polls often
   * ('done' follows 'running' closely) and holds the record to the host access policy. On a server,
   * an image the engine lacks is copied from the local engine before the service is made.
   */
  protected async engine(row: Row): Promise<Engine> {
    const hosts = this.cradle().hosts;
    const { serverId } = this.identify(row);
    const docker = await (await hosts.of(serverId)).engine();
    const hostAccess = this.cradle().hostAccess;
    // The organization's own network (the platform network for the instance operators'): made on first deploy.
    const { organizationId } = this.identify(row);
    const network = await hosts.ensureNetworkOf(docker, organizationId);
    const tenancy = { organizationId, network, platformNetwork: hosts.platformNetwork };
    const admit: Admit = async (w, deploy) => {
      await admitWorkload(w, docker, hostAccess, tenancy);
      if (serverId !== null) await hosts.provideImage(serverId, w.image);
      // The nodes the record's organization may use carry its label before its service is made or updated.
      await hosts.ensurePlacement(serverId, this.owner(row).organizationId);
      const constraints = deploy.spec.TaskTemplate?.Placement?.Constraints ?? [];
      await checkNodesCanPull(docker, { image: w.image, constraints, auth: deploy.auth, log: deploy.log }, nodeEngines(this.cradle(), docker, this.identify(row)));
    };
    const fallback = serverId === null ? undefined : async (image: string) => (await hosts.provideImage(serverId, image)) !== 'absent';
    return { docker, hosts, serverId, fallback, swarm: new SwarmRunner(docker, hosts, { pollMs: 100, admit, platformNetwork: network }) };
  }

  /** How a run waits for the engine: its signal, its log, the configured settle time. */
  protected wait(run: DeploymentRun): WaitOptions {
    return { signal: run.signal, log: line => run.log(line), settleMs: this.cradle().config.deploySettleSeconds * 1000 };
  }

  /**
   * What a run gives the source provider of the record's sourceType besides the fields, secrets
   * and work directory: the run's signal, log and redaction, the organization's SSH keys, the
   * commit asked for, and the host access policy's refusal of a local git URL.
   */
  protected sourceIo(row: Row, run: DeploymentRun): Omit<SourceRequest, 'fields' | 'secrets' | 'workDir'> {
    return this.sourceIoOf(row, { signal: run.signal, log: line => run.log(line), redact: value => run.redact(value), em: run.em }, run.deployment.checkout ?? null);
  }

  /** The same, for a fetch outside a run (a checkout to patch): its own signal, log, redaction and unit of work. */
  protected sourceIoOf(row: Row, io: CheckoutIo, ref: string | null): Omit<SourceRequest, 'fields' | 'secrets' | 'workDir'> {
    const cradle = this.cradle();
    const { organizationId } = this.identify(row);
    return {
      signal: io.signal,
      log: io.log,
      redact: io.redact,
      sshKey: keyId => cradle.sshKeys.privateKey(keyId, organizationId, io.em),
      organizationId,
      em: io.em,
      ref,
      owner: this.owner(row),
      // A record written while the config allowed it fails its next deploy once it no longer does.
      checkLocal: (location, field) => {
        const refused = cradle.hostAccess.localGitRefusal(location, field);
        if (refused) throw refused;
      },
    };
  }

  /** The record's file patches (the patch plugin's, when enabled), written into its fresh checkout before the build; throws naming the file of one that fails. */
  protected async applyPatches(row: Row, checkoutDir: string, run: DeploymentRun): Promise<void> {
    await optionalService(this.cradle(), 'workloadPatches')?.apply({ kind: this.targetType, id: this.identify(row).id }, checkoutDir, { em: run.em, log: line => run.log(line) });
  }

  /** The record as owner of engine objects. */
  protected owner(row: Row): Owner {
    const { id, organizationId } = this.identify(row);
    return { kind: this.targetType, id, organizationId };
  }

  /** The labels of every engine object a run creates for the record (service, image tag...). */
  protected labels(row: Row, run: DeploymentRun): Record<string, string> {
    return { ...ownerLabels(this.owner(row)), 'berth.deployment': run.deployment.deploymentId };
  }

  /** The runner's ownership option for the record's service. */
  protected owned(row: Row): Owned {
    return { owner: this.identify(row).id };
  }

  async run(action: string, run: DeploymentRun): Promise<void> {
    const row = await this.load(run.deployment.targetId, run.em);
    if (!row) throw new Error(`The ${this.noun} was deleted before its deployment ran`);
    const { id, appName } = this.identify(row);
    const engine = await this.engine(row);
    const owned = { ...this.wait(run), ...this.owned(row) };
    switch (action) {
      case 'stop':
        run.log(`Scaling ${appName} to 0 replicas`);
        await engine.swarm.scaleService(appName, 0, owned);
        await this.setStatus(id, 'idle', run.em);
        run.log('Stopped');
        return;
      case 'start': {
        await this.#assertDeployed(row, engine);
        const replicas = this.replicas(row);
        await this.setStatus(id, 'running', run.em);
        run.log(`Scaling ${appName} to ${replicas} replica(s)`);
        await engine.swarm.scaleService(appName, replicas, owned);
        if (replicas > 0) await this.ready(row, run, engine);
        await this.setStatus(id, 'done', run.em);
        run.log('Started');
        return;
      }
      case 'reload':
        await this.#assertDeployed(row, engine);
        await this.setStatus(id, 'running', run.em);
        run.log(`Restarting the tasks of ${appName}`);
        await engine.swarm.restartService(appName, owned);
        await this.ready(row, run, engine);
        await this.setStatus(id, 'done', run.em);
        run.log('Reloaded');
        return;
      default:
        // The appName changed since the last deploy: the service of the former name goes first,
        // as in a stop-first update (both would claim the record's host ports and data volume).
        for (const name of (await engine.swarm.servicesOf(id)).filter(n => n !== appName)) {
          run.log(`Removing ${name}, the service of its former name`);
          await engine.swarm.removeService(name, owned);
        }
        return this.deploy(row, action, run, engine);
    }
  }

  async settle(targetId: string, outcome: 'error' | 'cancelled', _reason: string, em: EntityManager): Promise<void> {
    const row = await this.load(targetId, em);
    if (!row) return;
    // A cancelled run leaves the previous version running: the status says what runs now.
    const exists =
      outcome === 'cancelled' &&
      (await this.engine(row)
        .then(e => e.swarm.serviceExists(this.identify(row).appName, this.owned(row)))
        .catch(() => false));
    await this.setStatus(targetId, outcome === 'error' ? 'error' : exists ? 'done' : 'idle', em);
  }

  /** Removes the record's services — its appName's and a former name's not yet replaced by a deploy (absent is fine) — and waits until their containers are gone. */
  async removeService(row: Row, opts: WaitOptions = {}): Promise<void> {
    const { swarm } = await this.engine(row);
    const { id, appName } = this.identify(row);
    for (const name of new Set([appName, ...(await swarm.servicesOf(id))])) await swarm.removeService(name, { ...opts, ...this.owned(row) });
  }

  /** The record's service log, optionally only the lines containing `search` (any case). */
  async serviceLogs(row: Row, options: { tail: number; since: string; search?: string | null }): Promise<string> {
    const { swarm } = await this.engine(row);
    return linesContaining(await swarm.serviceLogs(this.identify(row).appName, { tail: options.tail, since: options.since, ...this.owned(row) }), options.search);
  }

  async #assertDeployed(row: Row, engine: Engine): Promise<void> {
    const { appName } = this.identify(row);
    if (!(await engine.swarm.serviceExists(appName, this.owned(row)))) throw new Error(`${appName} has never been deployed: deploy it first`);
  }
}

/** What a RecordLifecycle reads and writes through a kind's records service. */
export interface LifecycleRecords<Row> {
  /** The record's settings (its `replicas` among them). */
  settingsOf(row: Row): Record<string, unknown>;
  /** Stores the record's status. */
  setStatus(id: string, status: string, em: EntityManager): Promise<void>;
}

/**
 * The lifecycle of a kind whose records are rows of an entity keyed by an id field, with the
 * workload columns (application, compose, the database kinds): loaded and identified by that
 * field, started with the replicas of their settings, their status stored by the kind's records
 * service.
 */
export abstract class RecordLifecycle<Row extends { appName: string; organizationId: string; serverId?: string | null }, Records extends LifecycleRecords<Row>> extends WorkloadLifecycle<Row> {
  /** The kind's records service. */
  protected readonly records: Records;
  readonly #entity: unknown;
  readonly #idField: string;

  constructor(table: { entity: unknown; idField: string }, records: Records, cradle: () => Cradle) {
    super(cradle);
    this.#entity = table.entity;
    this.#idField = table.idField;
    this.records = records;
  }

  protected load(id: string, em: EntityManager): Promise<Row | null> {
    return em.findOne(this.#entity as never, { [this.#idField]: id } as never) as Promise<Row | null>; // casts: the entity is the kind's, Row what its plugin declares it holds
  }

  protected identify(row: Row): LifecycleRecord {
    return { id: String((row as Record<string, unknown>)[this.#idField]), appName: row.appName, organizationId: row.organizationId, serverId: row.serverId ?? null };
  }

  protected replicas(row: Row): number {
    return Number(this.records.settingsOf(row).replicas ?? 1);
  }

  protected setStatus(id: string, status: string, em: EntityManager): Promise<void> {
    return this.records.setStatus(id, status, em);
  }

  /**
   * Fetches the record's repository into the empty directory workDir as its deploys do (its source
   * type's provider, its fields, its branch), outside a run: the checkout patch.* reads and edits.
   * Null when its source is no repository (an image, a stored file, a source type not enabled here).
   */
  async checkout(id: string, workDir: string, io: CheckoutIo): Promise<CheckoutSource | null> {
    const row = await this.load(id, io.em);
    const sourceType = row ? (row as { sourceType?: unknown }).sourceType : null;
    const providers = this.cradle().providers;
    if (!row || typeof sourceType !== 'string' || !providers.has('source', sourceType)) return null;
    const fetched = await providers.get('source', sourceType).resolve({ fields: this.records.settingsOf(row), secrets: {}, workDir, ...this.sourceIoOf(row, io, null) });
    return 'image' in fetched ? null : fetched;
  }
}
