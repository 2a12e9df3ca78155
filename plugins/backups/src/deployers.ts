// Restores run on the deploy queue as deployments of target type "restore" (a database's file:
// action restore; a volume's: action restoreVolume): queued, one log to read and follow, the hard
// timeout, cancellation, and on boot a restore found running is marked error like any deployment.
// Backup runs are deployments too, as the peer's are: a database backup's manual runs (target
// "backup") and every volume backup run (target "volumeBackup").
import type { Deployer, DeploymentRun, EntityManager } from '@berth/core';
import { Backup, Restore, VolumeBackup, VolumeRestore } from './entities.ts';
import type { BackupRunner } from './runner.ts';
import { BACKUP_TARGET, RESTORE_TARGET } from './service.ts';
import type { VolumeRunner } from './volume-runner.ts';
import { RESTORE_VOLUME_ACTION, VOLUME_BACKUP_TARGET } from './volume-backups.ts';

export class RestoreDeployer implements Deployer {
  readonly targetType = RESTORE_TARGET;
  readonly #runner: BackupRunner;
  readonly #volumes: VolumeRunner;

  constructor(runner: BackupRunner, volumes: VolumeRunner) {
    this.#runner = runner;
    this.#volumes = volumes;
  }

  async run(action: string, run: DeploymentRun): Promise<void> {
    const io = { signal: run.signal, log: (line: string) => run.log(line) };
    if (action === RESTORE_VOLUME_ACTION) {
      const restore = await run.em.findOne(VolumeRestore, { restoreId: run.deployment.targetId });
      if (!restore) throw new Error('The restore request is gone');
      return this.#volumes.restore(restore, run.em, io);
    }
    if (action !== 'restore') throw new Error(`Unknown restore action "${action}"`);
    const restore = await run.em.findOne(Restore, { restoreId: run.deployment.targetId });
    if (!restore) throw new Error('The restore request is gone');
    await this.#runner.restore(restore, run.em, io);
  }

  /** A restore has no status of its own besides its deployment's. */
  async settle(_targetId: string, _outcome: 'error' | 'cancelled', _reason: string, _em: EntityManager): Promise<void> {}
}

/**
 * The runs of one kind of backup record (a database backup's, target "backup"; a volume backup's,
 * target "volumeBackup"): action "backup" runs the record; a run that died with the process, timed
 * out or was cancelled is on the record too (lastRunAt, lastError).
 */
export class BackupRunDeployer<Row> implements Deployer {
  readonly targetType: string;
  readonly #entity: typeof Backup | typeof VolumeBackup;
  readonly #idField: string;
  readonly #run: (row: Row, run: DeploymentRun) => Promise<unknown>;

  constructor(targetType: string, entity: typeof Backup | typeof VolumeBackup, idField: string, runRow: (row: Row, run: DeploymentRun) => Promise<unknown>) {
    this.targetType = targetType;
    this.#entity = entity;
    this.#idField = idField;
    this.#run = runRow;
  }

  async run(action: string, run: DeploymentRun): Promise<void> {
    if (action !== 'backup') throw new Error(`Unknown ${this.targetType} action "${action}"`);
    const row = await run.em.findOne(this.#entity as typeof Backup, { [this.#idField]: run.deployment.targetId });
    if (!row) throw new Error(`The ${this.targetType} is gone`);
    await this.#run(row as Row, run);
  }

  async settle(targetId: string, _outcome: 'error' | 'cancelled', reason: string, em: EntityManager): Promise<void> {
    await em.nativeUpdate(this.#entity as typeof Backup, { [this.#idField]: targetId }, { lastRunAt: new Date(), lastError: reason });
  }
}
