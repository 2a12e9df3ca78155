// Runs one database kind's jobs on the deploy queue, on the shared lifecycle (stop, start,
// reload, settle, removal of the service): deploy (create or update the service with the
// driver's env, start command, data volume and port, then wait for the task AND the driver's
// readiness check), rebuild (service and data volume anew). Also the engine side of remove,
// changePassword and readLogs. Never asks which kind it runs.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkloadService } from '../services.ts';
import type { MountRecord } from '../attachments.ts';
import { resolveEnv } from '../swarm/env.ts';
import { ensureImage } from '../swarm/images.ts';
import { execIn, runHelper } from '../swarm/exec.ts';
import { dumpIn, restoreIn, sleep, verifyCopy, writeOfflineFiles, type DatabaseInContainer } from './container-backup.ts';
import { swarmSettingsToService } from '../swarm/settings.ts';
import { toServiceMounts } from '../swarm/mounts.ts';
import { ensureVolume, removeVolume } from '../swarm/volumes.ts';
import { RecordLifecycle, type Engine } from '../lifecycle.ts';
import { ownerLabels } from '../owners.ts';
import path from 'node:path';
import { tableOf, type DatabaseRow } from './entity.ts';
import type { DatabaseService } from './service.ts';
import { adoptedVolume, databaseDir } from './volumes.ts';
import { optionalService, type Cradle, type DatabaseCredentials, type DatabaseDriver, type DeploymentRun, badRequest } from '@berth/core';
import type { BackupIo, RemoveOptions } from '../registry.ts';
import type { Readable, Writable } from 'node:stream';

const READY_TIMEOUT_MS = 180_000;

interface Io {
  signal?: AbortSignal;
  log(line: string): void;
}

/** What a deploy masks in its log and error besides the user's env: the passwords, and the driver's variables that carry them in another form (secretEnv). */
export function deploySecrets(driver: DatabaseDriver, creds: DatabaseCredentials, driverEnv: Record<string, string>): (string | null)[] {
  return [creds.databasePassword, creds.databaseRootPassword, ...(driver.secretEnv ?? []).map(key => driverEnv[key] ?? null)];
}

export class DatabaseDeployer extends RecordLifecycle<DatabaseRow, DatabaseService> {
  readonly targetType: string;
  protected readonly noun: string;
  protected override readonly settingsTable: { table: string; idColumn: string };

  constructor(db: DatabaseService, cradle: () => Cradle) {
    super({ entity: db.entity, idField: 'id' }, db, cradle);
    this.targetType = db.driver.kind;
    this.settingsTable = { table: tableOf(db.driver.kind), idColumn: 'id' };
    this.noun = `${db.label} database`;
  }

  protected override ready(row: DatabaseRow, run: DeploymentRun, engine: Engine): Promise<void> {
    return this.#ready(row, engine, { signal: run.signal, log: line => run.log(line) });
  }

  protected async deploy(row: DatabaseRow, action: string, run: DeploymentRun, engine: Engine): Promise<void> {
    switch (action) {
      case 'deploy':
        return this.#deploy(row, run, engine);
      case 'rebuild':
        run.log(`Rebuilding ${row.appName}: removing the service and its data volume (the data is deleted)`);
        await this.setStatus(row.id, 'running', run.em);
        await this.#removeServiceAndVolume(row, engine, { signal: run.signal, log: line => run.log(line) });
        return this.#deploy(row, run, engine);
      default:
        throw new Error(`Unknown database action "${action}"`);
    }
  }

  async #deploy(row: DatabaseRow, run: DeploymentRun, engine: Engine): Promise<void> {
    const { driver } = this.records;
    const { docker, hosts, swarm } = engine;
    const cradle = this.cradle();
    await this.records.setStatus(row.id, 'running', run.em);
    const creds = this.records.credentialsOf(row);
    const sealed = this.records.sealedOf(row);
    const settings = this.records.settingsOf(row);
    const driverEnv = driver.containerEnv(creds, settings);
    for (const secret of deploySecrets(driver, creds, driverEnv)) run.redact(secret);

    const texts = await cradle.environments.variables(row.environmentId, row.organizationId, run.em);
    const userEnv = resolveEnv(sealed.env, texts);
    for (const value of Object.values(userEnv)) run.redact(value);
    // The driver's variables win: they carry the credentials the readiness check relies on.
    const env = { ...userEnv, ...driverEnv };

    const image = settings.dockerImage as string;
    await ensureImage(docker, image, null, { signal: run.signal, log: line => run.log(line), fallback: engine.fallback });

    // Made with the record's labels before the service, so Swarm never makes it implicitly, unlabelled.
    if ((await ensureVolume(docker, hosts, row.dataVolume, this.owner(row), { adopted: adoptedVolume(row, driver.kind) })) === 'created') {
      run.log(`Created the data volume ${row.dataVolume}`);
    }
    const swarmSettings = swarmSettingsToService(settings);
    const start = swarmSettings.command || swarmSettings.args?.length ? { command: swarmSettings.command, args: swarmSettings.args } : driver.startCommand(creds, settings);
    const service: WorkloadService = {
      name: row.appName,
      image,
      env,
      ...swarmSettings,
      networks: await this.networksOf(row, settings, run, engine),
      command: start.command ?? null,
      args: start.args ?? null,
      mounts: [{ type: 'volume', source: row.dataVolume, target: driver.dataPath }, ...(await this.#userMounts(row, run, engine))],
      ports: [[driver.internalPort, row.externalPort] as const, ...Object.entries(driver.extraPorts ?? {}).map(([field, port]) => [port, settings[field] as number | null] as const)].flatMap(
        ([targetPort, publishedPort]) => (publishedPort ? [{ targetPort, publishedPort, protocol: 'tcp' as const, publishMode: 'host' as const }] : []),
      ),
      detachPlatformNetwork: Boolean(settings.detachDokployNetwork),
      registryAuth: null,
      ownerLabels: this.labels(row, run),
      // One task owns the data volume at a time: the old one stops before the new one starts.
      defaultUpdateOrder: 'stop-first',
    };
    run.log(`Rolling out ${row.appName} (${driver.label}, ${image})`);
    await swarm.deployService(await this.pinned(row, service, run, engine), this.wait(run));
    await this.#ready(row, engine, { signal: run.signal, log: line => run.log(line) });
    await this.records.setStatus(row.id, 'done', run.em);
    run.log(`${row.appName} is ready`);
  }

  async #userMounts(row: DatabaseRow, run: DeploymentRun, engine: Engine): Promise<WorkloadService['mounts']> {
    const records: MountRecord[] = (await optionalService(this.cradle(), 'mounts')?.forServices(this.records.driver.kind, [row.id], run.em))?.get(row.id) ?? [];
    // A user mount on the data path would fight the data volume for it.
    const clash = records.find(m => path.posix.normalize(m.mountPath).replace(/\/+$/, '') === path.posix.normalize(this.records.driver.dataPath).replace(/\/+$/, ''));
    if (clash) throw new Error(`The mount at ${clash.mountPath} is where ${this.records.label} keeps its data volume: mount it elsewhere`);
    return toServiceMounts(records, path.join(databaseDir(this.cradle().config.dataDir, row.appName), 'files'), engine, this.owner(row), line => run.log(line));
  }

  /** The running task's container id, if there is one. */
  async #runningContainer(row: DatabaseRow, { swarm }: Engine): Promise<string | null> {
    const tasks = await swarm.serviceTasks(row.appName, this.owned(row));
    return tasks.find(t => t.state === 'running' && t.desiredState === 'running' && t.containerId)?.containerId ?? null;
  }

  /** Waits until the driver's readiness check passes inside the running task. */
  async #ready(row: DatabaseRow, engine: Engine, io: Io): Promise<void> {
    const check = this.records.driver.readinessCheck(this.records.credentialsOf(row));
    const until = Date.now() + READY_TIMEOUT_MS;
    io.log(`Waiting until ${row.appName} accepts connections`);
    let last = '';
    while (Date.now() < until) {
      io.signal?.throwIfAborted();
      const container = await this.#runningContainer(row, engine);
      if (container) {
        const result = await execIn(engine.docker, container, check, { signal: io.signal }).catch(e => ({ exitCode: -1, stdout: '', stderr: (e as Error).message }));
        if (result.exitCode === 0 && (!check.expectOutput || check.expectOutput.test(result.stdout))) return;
        last = (result.stderr || result.stdout).trim().split('\n').pop() ?? '';
      }
      await sleep(500, io.signal);
    }
    throw new Error(`${row.appName} did not become ready within ${READY_TIMEOUT_MS / 1000} s${last ? `: ${last}` : ''}`);
  }

  async #removeServiceAndVolume(row: DatabaseRow, { docker, hosts, swarm }: Engine, io: Partial<Io> = {}): Promise<void> {
    await swarm.removeService(row.appName, { ...io, ...this.owned(row) });
    // The removed task's container lets go of the volume a moment after the service is gone: removeVolume waits for it.
    await removeVolume(docker, hosts, row.dataVolume, row.id, { adopted: adoptedVolume(row, this.records.driver.kind), signal: io.signal });
  }

  /** Removes the service, and its data volume when asked (delete of the database, or of what holds it). */
  async removeAll(row: DatabaseRow, options: RemoveOptions): Promise<void> {
    if (options.volumes) await this.#removeServiceAndVolume(row, await this.engine(row));
    else await this.removeService(row);
  }

  /** Changes the password inside the running database; the caller stores it in the record. */
  async changePassword(row: DatabaseRow, password: string, type: 'user' | 'root'): Promise<void> {
    const { driver } = this.records;
    const creds = this.records.credentialsOf(row);
    if (type === 'root' && !driver.fields.databaseRootPassword)
      throw badRequest(`${driver.label} has no root password: use type "user"`, [{ path: ['type'], message: `${driver.label} has no root password` }]);
    const engine = await this.engine(row);
    const container = await this.#runningContainer(row, engine);
    if (!container) throw badRequest(`${row.appName} is not running: start it before changing its password`);
    const result = await execIn(engine.docker, container, driver.changePasswordCommand(creds, password, type));
    if (result.exitCode !== 0) {
      const reason = (result.stderr || result.stdout).trim().split('\n').pop() ?? `exit code ${result.exitCode}`;
      throw badRequest(`${driver.label} refused the new password: ${reason.replaceAll(password, '******')}`);
    }
  }

  /** The database in its running task (containerId null when none runs), for the shared container path. */
  async #inTask(row: DatabaseRow): Promise<DatabaseInContainer> {
    const engine = await this.engine(row);
    return { docker: engine.docker, containerId: await this.#runningContainer(row, engine), driver: this.records.driver, creds: this.records.credentialsOf(row), name: row.appName };
  }

  /** Streams the driver's dump of the database into `out` (ended at the end); the program runs in the task with its argument array. */
  async dump(row: DatabaseRow, databaseName: string | null, out: Writable, io: BackupIo): Promise<void> {
    await dumpIn(await this.#inTask(row), databaseName, out, io);
  }

  /** Feeds `input` to the driver's restore program inside the task, into databaseName (created when new); kinds that restore offline write it into the stopped data volume. */
  async restore(row: DatabaseRow, databaseName: string | null, input: Readable, io: BackupIo): Promise<void> {
    if (this.records.driver.offlineRestore) return this.#restoreOffline(row, input, io);
    await restoreIn(await this.#inTask(row), databaseName, input, io);
  }

  /** Restores the dump into a throwaway container of the record's image and answers the driver's inventory of the copy. */
  async verify(row: DatabaseRow, databaseName: string | null, input: Readable, io: BackupIo): Promise<string> {
    const { docker } = await this.engine(row);
    const image = this.records.settingsOf(row).dockerImage as string;
    const o = { image, driver: this.records.driver, creds: this.records.credentialsOf(row), record: this.records.settingsOf(row), labels: ownerLabels(this.owner(row)), name: row.appName };
    return verifyCopy(docker, o, databaseName, input, io);
  }

  /** Stops the service, replaces the data files from helper containers of the same image, starts it again and waits until it is ready. */
  async #restoreOffline(row: DatabaseRow, input: Readable, io: BackupIo): Promise<void> {
    const engine = await this.engine(row);
    const log = io.log ?? (() => {});
    const owned = { signal: io.signal, log, ...this.owned(row) };
    const image = this.records.settingsOf(row).dockerImage as string;
    log(`Stopping ${row.appName} to replace its data files`);
    await engine.swarm.scaleService(row.appName, 0, owned);
    const helper = { image, volume: row.dataVolume, mountPath: this.records.driver.dataPath, owner: this.owner(row), signal: io.signal };
    try {
      await writeOfflineFiles((cmd, stdin) => runHelper(engine.docker, { ...helper, stdin }, cmd), this.records.driver, input);
    } finally {
      log(`Starting ${row.appName} again`);
      await engine.swarm.scaleService(row.appName, this.replicas(row), owned);
    }
    await this.#ready(row, engine, { signal: io.signal, log });
  }

  /** The database's service log; BAD_REQUEST before its first deploy. */
  async logs(row: DatabaseRow, options: { tail: number; since: string; search?: string }): Promise<string> {
    const { swarm } = await this.engine(row);
    // Without this the engine's "no such service" became a NOT_FOUND for a record that exists.
    if (!(await swarm.serviceExists(row.appName, this.owned(row)))) throw badRequest(`${row.appName} has never been deployed: there are no logs to read yet`);
    return this.serviceLogs(row, options);
  }
}
