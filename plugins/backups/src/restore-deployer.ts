// Restores run on the deploy queue as deployments of target type "restore": queued, one log to
// read and follow, the hard timeout, cancellation, and on boot a restore found running is
// marked error like any deployment.
import type { Deployer, DeploymentRun, EntityManager } from '@berth/core';
import { Restore } from './entities.ts';
import type { BackupRunner } from './runner.ts';
import { RESTORE_TARGET } from './service.ts';

export class RestoreDeployer implements Deployer {
  readonly targetType = RESTORE_TARGET;
  readonly #runner: BackupRunner;

  constructor(runner: BackupRunner) {
    this.#runner = runner;
  }

  async run(action: string, run: DeploymentRun): Promise<void> {
    if (action !== 'restore') throw new Error(`Unknown restore action "${action}"`);
    const restore = await run.em.findOne(Restore, { restoreId: run.deployment.targetId });
    if (!restore) throw new Error('The restore request is gone');
    await this.#runner.restore(restore, run.em, { signal: run.signal, log: line => run.log(line) });
  }

  /** A restore has no status of its own besides its deployment's. */
  async settle(_targetId: string, _outcome: 'error' | 'cancelled', _reason: string, _em: EntityManager): Promise<void> {}
}
