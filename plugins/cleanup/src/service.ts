// Host care: a cleanup of one host (this machine or a server) as an API call, a deployment and a
// daily schedule. The organization check on serverId comes before anything is read or written;
// this machine is shared by every organization, so only an owner cleans it, and even then no
// other organization's objects go. A live record's objects (its labels name a record that still
// exists) never go either.
import { CronExpressionParser } from 'cron-parser';
import { BerthError, conflict, notFound, optionalService, type Cradle, type Deployer, type DeploymentRun, type EntityManager, type Principal } from '@berth/core';
import { ID_LABEL, KIND_LABEL, ORGANIZATION_LABEL } from '@berth/plugin-hosts';
import { HostCleanup } from './entities.ts';
import { diskUsage, planCleanup, removePlanned, type DiskUsage, type Keep, type Step, type StepPlan } from './plan.ts';

/** Each cleanup operation and its steps; cleanAll leaves volumes alone (a stopped app's data), as the peer's does since its volume incident. */
export const OPERATIONS = {
  cleanUnusedImages: ['images'],
  cleanUnusedVolumes: ['volumes'],
  cleanStoppedContainers: ['containers'],
  cleanDockerBuilder: ['builder'],
  cleanDockerPrune: ['containers', 'images', 'builder'],
  cleanAll: ['containers', 'images', 'builder'],
} as const satisfies Record<string, readonly Step[]>;
export type Operation = keyof typeof OPERATIONS;
/** The action of the daily run's deployment (the steps of cleanAll). */
export const DAILY = 'dailyCleanup';

export const CLEANUP_TARGET = 'dockerCleanup';
/** The targetId (and the key of the schedule's row) of this machine. */
export const THIS_MACHINE = 'this-machine';
export const TICK_JOB = 'cleanup.tick';

export interface CleanupReport {
  serverId: string | null;
  steps: StepPlan[];
  bytes: number;
  diskUsage: DiskUsage;
}

const stepsOf = (action: string): readonly Step[] => (action === DAILY ? OPERATIONS.cleanAll : (OPERATIONS[action as Operation] ?? []));

/** The server records' side the cleanup needs (the server plugin's `servers`). */
interface ServerDirectory {
  organizationOf(serverId: string): Promise<string | null>;
  dockerCleanupServers(em: EntityManager): Promise<{ serverId: string; name: string; organizationId: string }[]>;
  setDockerCleanup(serverId: string, organizationId: string, enabled: boolean, em: EntityManager): Promise<void>;
}

export class CleanupService implements Deployer {
  readonly targetType = CLEANUP_TARGET;
  readonly #cradle: () => Cradle;
  readonly #cron: () => string;

  readonly #thisMachine: () => boolean;

  constructor(cradle: () => Cradle, o: { cron: () => string; thisMachine: () => boolean }) {
    this.#cradle = cradle;
    this.#cron = o.cron;
    this.#thisMachine = o.thisMachine;
  }

  #servers(): ServerDirectory | undefined {
    // cast: the server plugin's directory is registered under a name the kernel's Cradle does not type.
    return optionalService(this.#cradle(), 'servers') as unknown as ServerDirectory | undefined;
  }

  /** NOT_FOUND for a serverId that is not the caller's organization's (this machine is its operators': the transport checks that). */
  async authorize(serverId: string | null | undefined, principal: Principal): Promise<string | null> {
    if (!serverId) return null;
    const owner = await this.#servers()?.organizationOf(serverId);
    if (owner !== principal.organizationId) throw notFound('Server');
    return serverId;
  }

  /** What stays: objects of another organization, and those of a record that still exists (or that Berth cannot judge). */
  keep(organizationId: string | null, em: EntityManager): Keep {
    const alive = new Map<string, Promise<boolean>>();
    return async labels => {
      const org = labels?.[ORGANIZATION_LABEL];
      const kind = labels?.[KIND_LABEL];
      const id = labels?.[ID_LABEL];
      if (!org && !kind && !id) return false;
      if (org && organizationId && org !== organizationId) return true;
      const k = kind ? this.#cradle().workloads.kind(kind) : undefined;
      if (!k || !id) return true;
      let found = alive.get(`${kind}/${id}`);
      if (!found) alive.set(`${kind}/${id}`, (found = k.find(id, em).then(r => r !== null)));
      return found;
    };
  }

  /** The report of a cleanup without removing anything (the dry run's answer). */
  async plan(action: string, serverId: string | null, organizationId: string | null, em: EntityManager): Promise<CleanupReport> {
    const hosts = this.#cradle().hosts;
    const docker = await (await hosts.of(serverId)).engine();
    const call = <T>(what: string, fn: () => Promise<T>) => hosts.call(what, fn);
    // One after the other: the engine runs one df at a time.
    // Every release kept on the host, whoever's: another organization's objects stay anyway.
    const releases = (await optionalService(this.#cradle(), 'workloadRollbacks')?.keptImages(serverId, em)) ?? new Set<string>();
    const steps = await planCleanup(docker, stepsOf(action), this.keep(organizationId, em), call, releases);
    const usage = await diskUsage(docker, call);
    return { serverId, steps, bytes: steps.reduce((s, p) => s + p.bytes, 0), diskUsage: usage };
  }

  /** Queues the cleanup as a deployment of the host; answers its id. CONFLICT for this machine when cleanupThisMachine is off. */
  async queue(action: string, serverId: string | null, organizationId: string, em: EntityManager): Promise<string> {
    if (!serverId && !this.#thisMachine()) throw conflict("Cleanups of Berth's own machine are turned off (the config key cleanupThisMachine); a dry run still answers what one would remove");
    const record = await this.#cradle().deployments.enqueue(
      {
        targetType: CLEANUP_TARGET,
        targetId: serverId ?? THIS_MACHINE,
        organizationId,
        serverId,
        action,
        title: action === DAILY ? 'Daily Docker cleanup' : `Docker cleanup (${action})`,
        description: serverId ? `on server ${serverId}` : "on Berth's own machine",
      },
      em,
    );
    return record.deploymentId;
  }

  /** Waits for a queued cleanup of the host to end; throws its error when it failed. */
  async finished(deploymentId: string, serverId: string | null): Promise<void> {
    const targetId = serverId ?? THIS_MACHINE;
    for (;;) {
      const em = this.#cradle().orm.em.fork() as EntityManager;
      const record = (await this.#cradle().deployments.listFor(CLEANUP_TARGET, [targetId], em)).get(targetId)?.find(d => d.deploymentId === deploymentId);
      if (record?.state === 'done') return;
      if (!record || record.state === 'error' || record.state === 'cancelled') throw new BerthError('INTERNAL_SERVER_ERROR', `The cleanup failed: ${record?.errorMessage ?? 'its deployment is gone'}`);
      await new Promise(r => setTimeout(r, 200));
    }
  }

  // ------------------------------------------------------------ the deployer
  async run(action: string, run: DeploymentRun): Promise<void> {
    const { serverId, organizationId } = run.deployment;
    let removed: StepPlan[] = [];
    let failure: string | undefined;
    try {
      // The daily run of this machine answers to the organization that turned it on.
      const report = await this.plan(action, serverId, organizationId, run.em);
      run.log(`disk usage before (bytes): ${JSON.stringify(report.diskUsage)}`);
      for (const step of report.steps) {
        run.log(`${step.step}: ${step.objects.length} object(s), ${step.bytes} bytes`);
        for (const o of step.objects) run.log(`  ${step.step} ${o.name} (${o.id}) ${o.bytes} bytes`);
      }
      run.log(`report ${JSON.stringify({ serverId: report.serverId, steps: report.steps, bytes: report.bytes })}`);
      const docker = await (await this.#cradle().hosts.of(serverId)).engine();
      const done = await removePlanned(docker, report.steps, line => run.log(line), run.signal);
      removed = done.removed;
      const after = await diskUsage(docker, (what, fn) => this.#cradle().hosts.call(what, fn));
      run.log(`disk usage after (bytes): ${JSON.stringify(after)}`);
      if (done.failures.length) failure = `${done.failures.length} object(s) could not be removed: ${done.failures.join('; ')}`;
    } catch (e) {
      failure = (e as Error).message;
    }
    const count = (step: Step) => removed.find(r => r.step === step)?.objects.length ?? 0;
    const reclaimed = removed.reduce((s, r) => s + r.bytes, 0);
    run.log(`removed: ${removed.map(r => `${r.step} ${r.objects.length}`).join(', ') || 'nothing'}; ${reclaimed} bytes reclaimed`);
    if (action === DAILY) {
      const name = serverId ? ((await this.#servers()?.dockerCleanupServers(run.em))?.find(s => s.serverId === serverId)?.name ?? serverId) : "Berth's own machine";
      // What it removed, and when it failed, why: a daily run nobody watches must not fail silently.
      this.#cradle().events.emit('dockerCleanup', {
        organizationId: serverId ? organizationId : null,
        serverId,
        serverName: name,
        removed: { containers: count('containers'), images: count('images'), volumes: count('volumes'), reclaimedBytes: reclaimed },
        ...(failure ? { error: failure } : {}),
        at: new Date().toISOString(),
      });
    }
    if (failure) throw new Error(failure);
  }

  async settle(): Promise<void> {}

  // ------------------------------------------------------------ the daily cleanup
  /** updateDockerCleanup: a server's flag (after the organization check) or this machine's. */
  async setDaily(enabled: boolean, serverId: string | null, organizationId: string, em: EntityManager): Promise<void> {
    if (serverId) {
      await this.#servers()!.setDockerCleanup(serverId, organizationId, enabled, em);
      return;
    }
    const row = await em.findOne(HostCleanup, { hostKey: THIS_MACHINE });
    if (row) {
      row.enableDockerCleanup = enabled;
      row.organizationId = organizationId;
    } else em.create(HostCleanup, { hostKey: THIS_MACHINE, enableDockerCleanup: enabled, organizationId, lastRunAt: null });
    await em.flush();
  }

  /** Queues the daily cleanup of each host whose latest cron window (at or before `now`) it has not handled; a host seen the first time only notes the window. */
  async tick(now = new Date()): Promise<string[]> {
    const em = this.#cradle().orm.em.fork() as EntityManager;
    let window: Date;
    try {
      window = CronExpressionParser.parse(this.#cron(), { currentDate: new Date(now.getTime() + 1), tz: 'UTC' })
        .prev()
        .toDate();
    } catch {
      return [];
    }
    const hosts: { key: string; serverId: string | null; organizationId: string }[] = [];
    const local = await em.findOne(HostCleanup, { hostKey: THIS_MACHINE });
    if (local?.enableDockerCleanup && local.organizationId && this.#thisMachine()) hosts.push({ key: THIS_MACHINE, serverId: null, organizationId: local.organizationId });
    for (const s of (await this.#servers()?.dockerCleanupServers(em)) ?? []) hosts.push({ key: s.serverId, serverId: s.serverId, organizationId: s.organizationId });
    const queued: string[] = [];
    for (const h of hosts) {
      const row = h.key === THIS_MACHINE ? local! : await em.findOne(HostCleanup, { hostKey: h.key });
      const last = row?.lastRunAt ?? null;
      if (last && last.getTime() >= window.getTime()) continue;
      // Whoever moves lastRunAt queues the run (several Berth processes tick the same rows).
      const moved = row
        ? await em.nativeUpdate(HostCleanup, { hostKey: h.key, lastRunAt: last }, { lastRunAt: window })
        : await em.insert(HostCleanup, { hostKey: h.key, enableDockerCleanup: true, organizationId: h.organizationId, lastRunAt: window }).then(
            () => 1,
            () => 0,
          );
      if (!moved || !last) continue;
      try {
        queued.push(await this.queue(DAILY, h.serverId, h.organizationId, em));
      } catch (e) {
        this.#cradle().logger.warn({ err: e, serverId: h.serverId }, 'the daily cleanup could not be queued');
      }
    }
    return queued;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** Host care (cleanups and their daily schedule); from the cleanup plugin. */
    cleanup: CleanupService;
  }
}
