// Backup verification on a schedule (backupVerify "schedule"): at each window of
// backupVerifySchedule, the newest file of each backup that was written before the window and
// was never checked is restored into a throwaway container of its kind and the driver's check is
// recorded with it, as a run does under "always". The state is the files' own `verified` (null =
// not checked yet), so a restart loses nothing: the first check after a window that passed while
// Berth was down catches up. A failed check is the backup's lastError and a failed databaseBackup
// event, never a silent success. A stop aborts the check under way (its file stays unchecked)
// and waits for the tick to end, so no throwaway container or job lock outlives the process.
import type { EntityManager, EventBus, JobScheduler, Logger } from '@berth/core';
import { Backup, BackupFile } from './entities.ts';
import { announceBackup, type BackupRunner } from './runner.ts';
import { lastWindow } from './schedules.ts';

export const VERIFY_JOB = 'backup-verifications';

/**
 * The job's lock, short and touched every LOCK_MS / 4 while the tick runs: Agenda keeps a ref'd
 * timer of half the lock lifetime per run, which would hold a stopping process that long.
 */
const LOCK_MS = 20_000;

type LockedJob = { touch(): Promise<void> };

export class VerifySchedule {
  readonly #runner: BackupRunner;
  readonly #em: () => EntityManager;
  readonly #events: () => EventBus;
  readonly #logger: () => Logger;
  readonly #schedule: string;
  /** The tick under way (null when none) and what aborts it at a stop. */
  #running: Promise<number> | null = null;
  #stop = new AbortController();

  constructor(o: { runner: BackupRunner; em: () => EntityManager; events: () => EventBus; logger: () => Logger; schedule: string }) {
    this.#runner = o.runner;
    this.#em = o.em;
    this.#events = o.events;
    this.#logger = o.logger;
    if (!lastWindow(o.schedule, new Date())) throw new Error(`backupVerifySchedule "${o.schedule}" is not a cron expression (5 or 6 fields)`);
    this.#schedule = o.schedule;
  }

  define(jobs: JobScheduler, tickSeconds: number): void {
    jobs.define(
      VERIFY_JOB,
      async (_data: unknown, job: LockedJob) => {
        await this.tick(new Date(), job);
      },
      { concurrency: 1, lockLifetimeMs: LOCK_MS },
    );
    jobs.every(`${tickSeconds} seconds`, VERIFY_JOB);
  }

  /** Aborts the check under way and waits for the tick to end; no tick starts afterwards. */
  async shutdown(): Promise<void> {
    this.#stop.abort(new Error('Berth is stopping'));
    await this.#running?.catch(() => {});
  }

  /** Checks, one after the other, each backup's newest unchecked file written before the latest window. */
  tick(now = new Date(), job?: LockedJob): Promise<number> {
    const window = lastWindow(this.#schedule, now);
    if (!window || this.#running || this.#stop.signal.aborted) return Promise.resolve(0);
    const running = this.#check(window, job).finally(() => {
      this.#running = null;
    });
    this.#running = running;
    return running;
  }

  async #check(window: Date, job?: LockedJob): Promise<number> {
    const keepLock = job ? setInterval(() => void job.touch().catch(e => this.#logger().warn({ err: e }, 'could not extend the lock of the backup verification job')), LOCK_MS / 4) : undefined;
    try {
      return await this.#checkFiles(window);
    } finally {
      clearInterval(keepLock);
    }
  }

  async #checkFiles(window: Date): Promise<number> {
    const signal = this.#stop.signal;
    const em = this.#em();
    let checked = 0;
    for (const backup of await em.find(Backup, {})) {
      if (signal.aborted) break;
      if (!this.#runner.canVerify(backup)) continue;
      const [newest] = await em.find(BackupFile, { backupId: backup.backupId }, { orderBy: { createdAt: 'desc', key: 'desc' }, limit: 1 });
      if (!newest || newest.verified !== null || newest.createdAt > window) continue;
      let ok: boolean;
      try {
        ok = await this.#runner.verifyFile(backup, newest, em, { signal });
      } catch (e) {
        if (signal.aborted) break;
        throw e;
      }
      checked++;
      if (ok) continue;
      const message = `Backup file ${newest.key} failed its scheduled restore check: ${newest.verification}`;
      backup.lastError = message;
      await em.transactional(tx => announceBackup(this.#events(), backup, { status: 'error', file: newest.key, error: message }, tx));
      this.#logger().warn({ backupId: backup.backupId, key: newest.key }, 'a backup file failed its scheduled restore check');
    }
    return checked;
  }
}
