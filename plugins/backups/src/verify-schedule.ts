// Backup verification on a schedule (backupVerify "schedule"): at each window of
// backupVerifySchedule, the newest file of each backup that was written before the window and
// was never checked is restored into a throwaway container of its kind and the driver's check is
// recorded with it, as a run does under "always". The state is the files' own `verified` (null =
// not checked yet), so a restart loses nothing: the first check after a window that passed while
// Berth was down catches up. A failed check is the backup's lastError and a failed databaseBackup
// event, never a silent success.
import type { EntityManager, EventBus, JobScheduler, Logger } from '@berth/core';
import { Backup, BackupFile } from './entities.ts';
import type { BackupRunner } from './runner.ts';
import { lastWindow } from './schedules.ts';

export const VERIFY_JOB = 'backup-verifications';

export class VerifySchedule {
  readonly #runner: BackupRunner;
  readonly #em: () => EntityManager;
  readonly #events: () => EventBus;
  readonly #logger: () => Logger;
  readonly #schedule: string;
  #running = false;

  constructor(o: { runner: BackupRunner; em: () => EntityManager; events: () => EventBus; logger: () => Logger; schedule: string }) {
    this.#runner = o.runner;
    this.#em = o.em;
    this.#events = o.events;
    this.#logger = o.logger;
    if (!lastWindow(o.schedule, new Date())) throw new Error(`backupVerifySchedule "${o.schedule}" is not a cron expression (5 or 6 fields)`);
    this.#schedule = o.schedule;
  }

  define(jobs: JobScheduler, tickSeconds: number): void {
    // A short lock renewed while the checks run: Agenda keeps a ref'd timer of half the lock
    // lifetime per run, so a lock of hours kept the process alive for hours after each tick.
    const lockLifetimeMs = Math.max(30_000, tickSeconds * 2000);
    jobs.define(VERIFY_JOB, async (_data, job) => {
      const renew = setInterval(() => void job.touch().catch(() => {}), lockLifetimeMs / 3);
      try {
        await this.tick();
      } finally {
        clearInterval(renew);
      }
    }, { concurrency: 1, lockLifetimeMs });
    jobs.every(`${tickSeconds} seconds`, VERIFY_JOB);
  }

  /** Checks, one after the other, each backup's newest unchecked file written before the latest window. */
  async tick(now = new Date()): Promise<number> {
    const window = lastWindow(this.#schedule, now);
    if (!window || this.#running) return 0;
    this.#running = true;
    let checked = 0;
    try {
      const em = this.#em();
      for (const backup of await em.find(Backup, {})) {
        if (!this.#runner.canVerify(backup)) continue;
        const [newest] = await em.find(BackupFile, { backupId: backup.backupId }, { orderBy: { createdAt: 'desc', key: 'desc' }, limit: 1 });
        if (!newest || newest.verified !== null || newest.createdAt > window) continue;
        checked++;
        const ok = await this.#runner.verifyFile(backup, newest, em).catch((e: Error) => { newest.verification = e.message; return false; });
        if (ok) continue;
        const message = `Backup file ${newest.key} failed its scheduled restore check: ${newest.verification}`;
        backup.lastError = message;
        await em.flush();
        this.#logger().warn({ backupId: backup.backupId, key: newest.key }, 'a backup file failed its scheduled restore check');
        this.#events().emit('databaseBackup', { backupId: backup.backupId, organizationId: backup.organizationId, databaseType: backup.databaseType, status: 'error', file: newest.key, error: message });
      }
    } finally {
      this.#running = false;
    }
    return checked;
  }
}
