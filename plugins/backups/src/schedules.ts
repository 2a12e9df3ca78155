// Backup schedules on Agenda: one repeating job checks every enabled backup's cron each tick
// and runs the ones whose time has come, each run a deployment of the backup like a manual one
// (waited for: a backup whose run is still queued or going is not run again). What was handled
// is stored on the backup (lastRunAt), so a restart loses nothing: a window that passed while
// Berth was down (or while a run was still going) is a missed window, written on the backup and
// raised as a failed backup.
// Volume backups are checked on the same tick: a due one is marked handled and its run queued
// as a deployment (durable: a run queued before a restart still runs).
import { CronExpressionParser } from 'cron-parser';
import type { EntityManager, EventBus, JobScheduler, Logger } from '@berth/core';
import { Backup, VolumeBackup, type BackupRow } from './entities.ts';
import type { VolumeBackupService } from './volume-backups.ts';
import { announceBackup } from './runner.ts';

export const SCHEDULE_JOB = 'backup-schedules';

/** The latest cron time at or before `now`, or null for an invalid expression. */
export function lastWindow(schedule: string, now: Date): Date | null {
  try {
    return CronExpressionParser.parse(schedule, { currentDate: new Date(now.getTime() + 1) })
      .prev()
      .toDate();
  } catch {
    return null;
  }
}

/** The cron times after `since` and at or before `now` (at most `limit`). */
function windowsBetween(schedule: string, since: Date, now: Date, limit = 50): Date[] {
  const out: Date[] = [];
  const it = CronExpressionParser.parse(schedule, { currentDate: since, endDate: now });
  while (out.length < limit && it.hasNext()) out.push(it.next().toDate());
  return out;
}

export class BackupSchedules {
  readonly #run: (row: BackupRow, em: EntityManager) => Promise<void>;
  readonly #em: () => EntityManager;
  readonly #events: () => EventBus;
  readonly #logger: () => Logger;
  readonly #volumes: VolumeBackupService;
  readonly #running = new Set<string>();

  constructor(o: { run: (row: BackupRow, em: EntityManager) => Promise<void>; volumes: VolumeBackupService; em: () => EntityManager; events: () => EventBus; logger: () => Logger }) {
    this.#run = o.run;
    this.#volumes = o.volumes;
    this.#em = o.em;
    this.#events = o.events;
    this.#logger = o.logger;
  }

  define(jobs: JobScheduler, tickSeconds: number): void {
    jobs.define(SCHEDULE_JOB, () => this.tick(), { concurrency: 1, lockLifetimeMs: Math.max(30_000, tickSeconds * 2000) });
    jobs.every(`${tickSeconds} seconds`, SCHEDULE_JOB);
  }

  /** Runs every enabled backup whose latest window is newer than its last handled one; records the windows that were missed. */
  async tick(now = new Date()): Promise<void> {
    const em = this.#em();
    const backups = await em.find(Backup, { enabled: true });
    for (const backup of backups) {
      const window = lastWindow(backup.schedule, now);
      if (!window || this.#running.has(backup.backupId)) continue;
      const since = backup.lastRunAt ?? backup.createdAt;
      if (window <= since) continue;
      const missed = windowsBetween(backup.schedule, since, now).slice(0, -1);
      if (missed.length && backup.lastRunAt) await this.#missed(backup, missed, em);
      this.#running.add(backup.backupId);
      // One backup's run never holds the others up; its outcome is on its record and in the event.
      const own = em.fork();
      void own
        .findOneOrFail(Backup, { backupId: backup.backupId })
        .then(row => this.#run(row, own))
        .catch(e => this.#logger().warn({ err: e, backupId: backup.backupId }, 'scheduled backup failed'))
        .finally(() => this.#running.delete(backup.backupId));
    }
    await this.#tickVolumes(now, em);
  }

  /** Queues the run of every enabled volume backup whose latest window is newer than its last handled one. */
  async #tickVolumes(now: Date, em: EntityManager): Promise<void> {
    for (const row of await em.find(VolumeBackup, { enabled: true })) {
      const window = lastWindow(row.cronExpression, now);
      if (!window || window <= (row.lastRunAt ?? row.createdAt)) continue;
      row.lastRunAt = now;
      await em.flush();
      await this.#volumes.enqueue(row, em).catch(e => this.#logger().warn({ err: e, volumeBackupId: row.volumeBackupId }, 'a scheduled volume backup could not be queued'));
    }
  }

  async #missed(backup: BackupRow, missed: Date[], em: EntityManager): Promise<void> {
    backup.missedWindows = (backup.missedWindows ?? 0) + missed.length;
    backup.lastMissedAt = missed[missed.length - 1]!;
    const message = `Missed ${missed.length} scheduled window(s), the first at ${missed[0]!.toISOString()} (Berth was not running, or the previous run had not ended)`;
    await em.transactional(tx => announceBackup(this.#events(), backup, { status: 'error', file: null, error: message }, tx));
    this.#logger().warn({ backupId: backup.backupId }, message);
  }
}
