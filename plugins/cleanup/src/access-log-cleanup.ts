// The proxy's access log cleanup, the peer's log cleanup: on its cron schedule (UTC; the peer's
// default, daily at midnight, until an operator changes it) the access log keeps its last 1000
// lines and the proxy reopens it. The log is the domain plugin's (`accessLog`: which file, and
// trimming it); the schedule and the window last handled are kept here, so a restart neither
// repeats a run nor runs a window that passed before.
import { CronExpressionParser } from 'cron-parser';
import { invalidField, optionalService, type Cradle, type EntityManager } from '@berth/core';
import { AccessLogCleanup } from './entities.ts';
import { THIS_MACHINE } from './service.ts';

/** The peer's default schedule. */
export const DEFAULT_LOG_CLEANUP_CRON = '0 0 * * *';
/** The lines an access log keeps, as the peer's cleanup. */
export const KEPT_LINES = 1000;

export interface LogCleanupStatus {
  enabled: boolean;
  cronExpression: string | null;
}

/** The latest window of the schedule at or before `now`. */
const windowAt = (cron: string, now: Date) =>
  CronExpressionParser.parse(cron, { currentDate: new Date(now.getTime() + 1), tz: 'UTC' })
    .prev()
    .toDate();

export class AccessLogCleanupService {
  readonly #cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  async status(em: EntityManager): Promise<LogCleanupStatus> {
    const row = await em.findOne(AccessLogCleanup, { hostKey: THIS_MACHINE });
    const cronExpression = row ? (row.cronExpression ?? null) : DEFAULT_LOG_CLEANUP_CRON;
    return { enabled: cronExpression !== null, cronExpression };
  }

  /** A new schedule (null or "": none); its current window counts as handled, so the first run is the next one. */
  async update(cronExpression: string | null, em: EntityManager, now = new Date()): Promise<void> {
    const cron = cronExpression?.trim() || null;
    let lastRunAt: Date | null = null;
    if (cron) {
      try {
        lastRunAt = windowAt(cron, now);
      } catch (e) {
        throw invalidField('cronExpression', `not a cron expression (minute hour day-of-month month day-of-week): ${(e as Error).message}`);
      }
    }
    const row = await em.findOne(AccessLogCleanup, { hostKey: THIS_MACHINE });
    if (row) Object.assign(row, { cronExpression: cron, lastRunAt });
    else em.create(AccessLogCleanup, { hostKey: THIS_MACHINE, cronExpression: cron, lastRunAt });
    await em.flush();
  }

  /**
   * Trims the access log when a window of the schedule passed since the last one handled; the first
   * tick only notes the window. Answers what was trimmed, or null when nothing was due.
   */
  async tick(now = new Date()): Promise<{ file: string | null; removedBytes: number } | null> {
    const em = this.#cradle().orm.em.fork() as EntityManager;
    const row = await em.findOne(AccessLogCleanup, { hostKey: THIS_MACHINE });
    const cron = row ? (row.cronExpression ?? null) : DEFAULT_LOG_CLEANUP_CRON;
    if (!cron) return null;
    let window: Date;
    try {
      window = windowAt(cron, now);
    } catch {
      return null;
    }
    const last = row?.lastRunAt ?? null;
    if (last && last.getTime() >= window.getTime()) return null;
    // Whoever moves lastRunAt trims (several Berth processes tick the same row).
    const moved = row
      ? await em.nativeUpdate(AccessLogCleanup, { hostKey: THIS_MACHINE, lastRunAt: last }, { lastRunAt: window })
      : await em.insert(AccessLogCleanup, { hostKey: THIS_MACHINE, cronExpression: cron, lastRunAt: window }).then(
          () => 1,
          () => 0,
        );
    if (!moved || !last) return null;
    const log = optionalService(this.#cradle(), 'accessLog');
    if (!log) return null;
    try {
      const trimmed = await log.trim(KEPT_LINES);
      if (trimmed.removedBytes) this.#cradle().logger.info({ ...trimmed, kept: KEPT_LINES }, 'the access log was trimmed');
      return trimmed;
    } catch (e) {
      this.#cradle().logger.warn({ err: e }, 'the access log could not be trimmed');
      return null;
    }
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The access log cleanup's schedule; from the cleanup plugin. */
    accessLogCleanup: AccessLogCleanupService;
  }
}
