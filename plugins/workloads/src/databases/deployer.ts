// Runs one database kind's jobs on the deploy queue: deploy (create or update the service with
// the driver's env, start command, data volume and port, then wait for the task AND the
// driver's readiness check), start, stop, reload, rebuild (service and data volume anew). Also
// the engine side of remove, changePassword and readLogs. Never asks which kind it runs.
import type Docker from 'dockerode';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ContainerHosts } from '../container-hosts.ts';
import type { WorkloadService } from '../services.ts';
import type { MountRecord } from '../attachments.ts';
import { resolveEnv } from '../swarm/env.ts';
import { ensureImage } from '../swarm/images.ts';
import { execIn } from '../swarm/exec.ts';
import { SwarmRunner } from '../swarm/runner.ts';
import { swarmSettingsToService } from '../swarm/settings.ts';
import { toServiceMounts } from '../swarm/mounts.ts';
import path from 'node:path';
import type { DatabaseRow } from './entity.ts';
import type { DatabaseService } from './service.ts';
import { databaseDir } from './kind.ts';
import { optionalService, type Cradle, type DatabaseCredentials, type Deployer, type DeploymentRun, badRequest } from '@berth/core';
import type { RemoveOptions } from '../registry.ts';

const READY_TIMEOUT_MS = 180_000;
const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  // An 'abort' listener added after the abort never fires: a cancelled run would sleep on.
  if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason ?? new Error('aborted')); }, { once: true });
});

/** The named volume holding a database's data. */
export const dataVolumeOf = (appName: string) => `${appName}-data`;

interface Io { signal: AbortSignal; log(line: string): void }

export class DatabaseDeployer implements Deployer {
  readonly targetType: string;
  readonly #db: DatabaseService;
  readonly #cradle: () => Cradle;

  constructor(db: DatabaseService, cradle: () => Cradle) {
    this.#db = db;
    this.#cradle = cradle;
    this.targetType = db.driver.kind;
  }

  async #engine(): Promise<{ docker: Docker; hosts: ContainerHosts; swarm: SwarmRunner }> {
    const hosts = this.#cradle().hosts;
    const docker = await hosts.local();
    return { docker, hosts, swarm: new SwarmRunner(docker, hosts, { pollMs: 100 }) };
  }

  async run(action: string, run: DeploymentRun): Promise<void> {
    const row = await run.em.findOne(this.#db.entity, { id: run.deployment.targetId }) as DatabaseRow | null;
    if (!row) throw new Error(`The ${this.#db.label} database was deleted before its deployment ran`);
    const engine = await this.#engine();
    const io: Io = { signal: run.signal, log: line => run.log(line) };
    const status = (s: string) => this.#db.setStatus(row.id, s, run.em);
    switch (action) {
      case 'deploy':
        return this.#deploy(row, run, engine);
      case 'rebuild':
        run.log(`Rebuilding ${row.appName}: removing the service and its data volume (the data is deleted)`);
        await status('running');
        await this.#removeServiceAndVolume(row, engine, io);
        return this.#deploy(row, run, engine);
      case 'stop':
        run.log(`Scaling ${row.appName} to 0 replicas`);
        await engine.swarm.scaleService(row.appName, 0, io);
        await status('idle');
        run.log('Stopped');
        return;
      case 'start': {
        if (!(await engine.swarm.serviceExists(row.appName))) throw new Error(`${row.appName} has never been deployed: deploy it first`);
        await status('running');
        const replicas = Number(this.#db.settingsOf(row).replicas ?? 1);
        run.log(`Scaling ${row.appName} to ${replicas} replica(s)`);
        await engine.swarm.scaleService(row.appName, replicas, io);
        if (replicas > 0) await this.#ready(row, this.#db.credentialsOf(row), engine, io);
        await status('done');
        return;
      }
      case 'reload':
        if (!(await engine.swarm.serviceExists(row.appName))) throw new Error(`${row.appName} has never been deployed: deploy it first`);
        await status('running');
        run.log(`Restarting the task of ${row.appName}`);
        await engine.swarm.restartService(row.appName, io);
        await this.#ready(row, this.#db.credentialsOf(row), engine, io);
        await status('done');
        return;
      default:
        throw new Error(`Unknown database action "${action}"`);
    }
  }

  async settle(targetId: string, outcome: 'error' | 'cancelled', _reason: string, em: EntityManager): Promise<void> {
    const row = await em.findOne(this.#db.entity, { id: targetId }) as DatabaseRow | null;
    if (!row) return;
    const exists = outcome === 'cancelled' && await this.#engine().then(e => e.swarm.serviceExists(row.appName)).catch(() => false);
    await this.#db.setStatus(targetId, outcome === 'error' ? 'error' : exists ? 'done' : 'idle', em);
  }

  async #deploy(row: DatabaseRow, run: DeploymentRun, { docker, swarm }: { docker: Docker; swarm: SwarmRunner }): Promise<void> {
    const { driver } = this.#db;
    const cradle = this.#cradle();
    await this.#db.setStatus(row.id, 'running', run.em);
    const creds = this.#db.credentialsOf(row);
    const sealed = this.#db.sealedOf(row);
    const settings = this.#db.settingsOf(row);
    for (const secret of [creds.databasePassword, creds.databaseRootPassword]) run.redact(secret);

    const texts = await cradle.environments.variables(row.environmentId, row.organizationId, run.em);
    const userEnv = resolveEnv(sealed.env, texts);
    for (const value of Object.values(userEnv)) run.redact(value);
    // The driver's variables win: they carry the credentials the readiness check relies on.
    const env = { ...userEnv, ...driver.containerEnv(creds) };

    const image = settings.dockerImage as string;
    await ensureImage(docker, image, null, { signal: run.signal, log: line => run.log(line) });

    const swarmSettings = swarmSettingsToService(settings);
    const start = swarmSettings.command || swarmSettings.args?.length ? { command: swarmSettings.command, args: swarmSettings.args } : driver.startCommand(creds);
    const service: WorkloadService = {
      name: row.appName,
      image,
      env,
      ...swarmSettings,
      command: start.command ?? null,
      args: start.args ?? null,
      mounts: [{ type: 'volume', source: dataVolumeOf(row.appName), target: driver.dataPath }, ...await this.#userMounts(row, run.em)],
      ports: row.externalPort ? [{ targetPort: driver.internalPort, publishedPort: row.externalPort, protocol: 'tcp', publishMode: 'host' }] : [],
      detachPlatformNetwork: Boolean(settings.detachPlatformNetwork),
      registryAuth: null,
      ownerLabels: { 'berth.kind': driver.kind, 'berth.id': row.id, 'berth.deployment': run.deployment.deploymentId },
      // One task owns the data volume at a time: the old one stops before the new one starts.
      defaultUpdateOrder: 'stop-first',
    };
    run.log(`Rolling out ${row.appName} (${driver.label}, ${image})`);
    await swarm.deployService(service, { signal: run.signal, log: line => run.log(line), settleMs: cradle.config.deploySettleSeconds * 1000 });
    await this.#ready(row, creds, { docker, swarm }, { signal: run.signal, log: line => run.log(line) });
    await this.#db.setStatus(row.id, 'done', run.em);
    run.log(`${row.appName} is ready`);
  }

  async #userMounts(row: DatabaseRow, em: EntityManager): Promise<WorkloadService['mounts']> {
    const records: MountRecord[] = (await optionalService(this.#cradle(), 'mounts')?.forServices(this.#db.driver.kind, [row.id], em))?.get(row.id) ?? [];
    // A user mount on the data path would fight the data volume for it.
    const clash = records.find(m => path.posix.normalize(m.mountPath).replace(/\/+$/, '') === path.posix.normalize(this.#db.driver.dataPath).replace(/\/+$/, ''));
    if (clash) throw new Error(`The mount at ${clash.mountPath} is where ${this.#db.label} keeps its data volume: mount it elsewhere`);
    return toServiceMounts(records, path.join(databaseDir(this.#cradle().config.dataDir, row.appName), 'files'));
  }

  /** The running task's container id, if there is one. */
  async #runningContainer(appName: string, swarm: SwarmRunner): Promise<string | null> {
    const tasks = await swarm.serviceTasks(appName);
    return tasks.find(t => t.state === 'running' && t.desiredState === 'running' && t.containerId)?.containerId ?? null;
  }

  /** Waits until the driver's readiness check passes inside the running task. */
  async #ready(row: DatabaseRow, creds: DatabaseCredentials, { docker, swarm }: { docker: Docker; swarm: SwarmRunner }, io: Io): Promise<void> {
    const check = this.#db.driver.readinessCheck(creds);
    const until = Date.now() + READY_TIMEOUT_MS;
    io.log(`Waiting until ${row.appName} accepts connections`);
    let last = '';
    while (Date.now() < until) {
      io.signal.throwIfAborted();
      const container = await this.#runningContainer(row.appName, swarm);
      if (container) {
        const result = await execIn(docker, container, check, { signal: io.signal }).catch(e => ({ exitCode: -1, stdout: '', stderr: (e as Error).message }));
        if (result.exitCode === 0 && (!check.expectOutput || check.expectOutput.test(result.stdout))) return;
        last = (result.stderr || result.stdout).trim().split('\n').pop() ?? '';
      }
      await sleep(500, io.signal);
    }
    throw new Error(`${row.appName} did not become ready within ${READY_TIMEOUT_MS / 1000} s${last ? `: ${last}` : ''}`);
  }

  async #removeServiceAndVolume(row: DatabaseRow, { docker, swarm }: { docker: Docker; swarm: SwarmRunner }, io?: Io): Promise<void> {
    await swarm.removeService(row.appName, io ?? {});
    const volume = docker.getVolume(dataVolumeOf(row.appName));
    const until = Date.now() + 60_000;
    // The removed task's container lets go of the volume a moment after the service is gone.
    for (;;) {
      try {
        await volume.remove();
        return;
      } catch (e) {
        const code = (e as { statusCode?: number }).statusCode;
        if (code === 404) return;
        if (code !== 409 || Date.now() > until) throw new Error(`Could not remove the data volume of ${row.appName}: ${(e as Error).message}`);
        await sleep(250, io?.signal);
      }
    }
  }

  /** Removes the service, and its data volume when asked (delete of the database, or of what holds it). */
  async removeAll(row: DatabaseRow, options: RemoveOptions): Promise<void> {
    const engine = await this.#engine();
    if (options.volumes) await this.#removeServiceAndVolume(row, engine);
    else await engine.swarm.removeService(row.appName, {});
  }

  /** Changes the password inside the running database; the caller stores it in the record. */
  async changePassword(row: DatabaseRow, password: string, type: 'user' | 'root'): Promise<void> {
    const { driver } = this.#db;
    const creds = this.#db.credentialsOf(row);
    if (type === 'root' && !driver.fields.databaseRootPassword) throw badRequest(`${driver.label} has no root password: use type "user"`, [{ path: ['type'], message: `${driver.label} has no root password` }]);
    const engine = await this.#engine();
    const container = await this.#runningContainer(row.appName, engine.swarm);
    if (!container) throw badRequest(`${row.appName} is not running: start it before changing its password`);
    const result = await execIn(engine.docker, container, driver.changePasswordCommand(creds, password, type));
    if (result.exitCode !== 0) {
      const reason = (result.stderr || result.stdout).trim().split('\n').pop() ?? `exit code ${result.exitCode}`;
      throw badRequest(`${driver.label} refused the new password: ${reason.replaceAll(password, '******')}`);
    }
  }

  async logs(row: DatabaseRow, options: { tail: number; since: string; search?: string }): Promise<string> {
    const { swarm } = await this.#engine();
    // Without this the engine's "no such service" became a NOT_FOUND for a record that exists.
    if (!(await swarm.serviceExists(row.appName))) throw badRequest(`${row.appName} has never been deployed: there are no logs to read yet`);
    const text = await swarm.serviceLogs(row.appName, { tail: options.tail, since: options.since });
    if (!options.search) return text;
    const needle = options.search.toLowerCase();
    return text.split('\n').filter(l => l.toLowerCase().includes(needle)).join('\n');
  }
}
