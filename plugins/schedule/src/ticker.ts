// Schedules on Berth's durable job scheduler (Agenda, on the platform's PostgreSQL): one
// repeating job checks every enabled schedule each tick and queues a run (a deployment of the
// schedule) for each whose cron time has come. What was handled is stored on the schedule
// (lastRunAt: the latest cron time handled), in the transaction that queues its run, so a restart
// loses nothing and runs nothing twice. Cron times that passed while Berth was not running make
// one catch-up run, whose log says how many were missed; a run still waiting in the queue is not
// queued again (one waits behind the run going, never more).
import type { Cradle, EntityManager, JobScheduler, Logger } from '@berth/core';
import { Schedule, type ScheduleRow } from './entities.ts';
import { parseCron, RUN_ACTIONS, type ScheduleStore } from './service.ts';

export const TICK_JOB = 'schedule.tick';
/** Missed cron times counted at most (a catch-up after a long stop says "at least"). */
const COUNT_LIMIT = 1000;

/** The latest cron time at or before `now` (null for an expression that no longer parses). */
export function latestTime(row: Pick<ScheduleRow, 'cronExpression' | 'timezone'>, now: Date): Date | null {
  try {
    return parseCron(row.cronExpression, row.timezone ?? null, { currentDate: new Date(now.getTime() + 1) })
      .prev()
      .toDate();
  } catch {
    return null;
  }
}

/** The cron times after `since` and at or before `until` (counted up to COUNT_LIMIT), the first and last of them. */
function timesBetween(row: Pick<ScheduleRow, 'cronExpression' | 'timezone'>, since: Date, until: Date): { count: number; first: Date | null; last: Date | null } {
  const it = parseCron(row.cronExpression, row.timezone ?? null, { currentDate: since, endDate: until });
  let count = 0;
  let first: Date | null = null;
  let last: Date | null = null;
  while (count < COUNT_LIMIT && it.hasNext()) {
    last = it.next().toDate();
    first ??= last;
    count++;
  }
  return { count, first, last };
}

export class ScheduleTicker {
  readonly #store: ScheduleStore;
  readonly #cradle: () => Cradle;
  readonly #em: () => EntityManager;
  readonly #logger: () => Logger;
  /** How old a cron time passed without a run must be to count as missed (set by define()). */
  #lateMs = 30_000;

  constructor(o: { store: ScheduleStore; cradle: () => Cradle; em: () => EntityManager; logger: () => Logger }) {
    this.#store = o.store;
    this.#cradle = o.cradle;
    this.#em = o.em;
    this.#logger = o.logger;
  }

  define(jobs: JobScheduler, tickSeconds: number): void {
    // A cron time older than two ticks (and Agenda's own polling) was not met: Berth was not running.
    this.#lateMs = tickSeconds * 2000 + 10_000;
    jobs.define(TICK_JOB, () => this.tick(), { concurrency: 1, lockLifetimeMs: Math.max(30_000, tickSeconds * 2000) });
    jobs.every(`${tickSeconds} seconds`, TICK_JOB);
  }

  /** Queues a run of every enabled schedule whose latest cron time is after the last one handled. */
  async tick(now = new Date()): Promise<void> {
    const em = this.#em();
    for (const row of await em.find(Schedule, { enabled: true }, { orderBy: { createdAt: 'asc' } })) {
      // One schedule's trouble (its workload gone, its server inactive) never holds up the others.
      await this.#consider(row, now, em.fork() as EntityManager).catch(e => this.#logger().warn({ err: e, scheduleId: row.scheduleId }, 'a scheduled run could not be queued'));
    }
  }

  async #consider(row: ScheduleRow, now: Date, em: EntityManager): Promise<void> {
    const latest = latestTime(row, now);
    const since = row.lastRunAt ?? row.createdAt;
    if (!latest || latest <= since) return;
    // Missed: the times older than two ticks — a tick passed them by, so Berth was not running. A
    // cron quicker than the tick has several times per tick, and none of them is missed.
    const cutoff = new Date(now.getTime() - this.#lateMs);
    const missed = cutoff > since ? timesBetween(row, since, cutoff) : { count: 0, first: null, last: null };
    const catchUp = missed.count > 0;
    const description = catchUp
      ? `Catch-up run: ${missed.count >= COUNT_LIMIT ? `at least ${missed.count}` : missed.count} scheduled time(s) passed without a run (Berth was not running), the first at ${missed.first!.toISOString()}, the last at ${missed.last!.toISOString()}; this one run makes up for them`
      : null;
    await em.transactional(async tx => {
      // Handled once, whichever process ticks: the time moves only from the value read.
      const moved = await tx.nativeUpdate(Schedule, { scheduleId: row.scheduleId, lastRunAt: row.lastRunAt ?? null }, { lastRunAt: latest });
      if (!moved || (await this.#store.waiting(row, tx as EntityManager))) return;
      try {
        // A savepoint: a run that cannot be queued (its workload gone, its server inactive) leaves the time handled.
        await tx.transactional(async inner => {
          const request = await this.#store.request(row, catchUp ? RUN_ACTIONS.catchUp : RUN_ACTIONS.scheduled, description, inner as EntityManager);
          await this.#cradle().deployments.enqueue(request, inner as EntityManager);
        });
      } catch (e) {
        const error = `The run at ${latest.toISOString()} could not be queued: ${(e as Error).message}`;
        this.#logger().warn({ scheduleId: row.scheduleId, err: e }, error);
        await this.#cradle().events.emitDurable(
          'scheduleFailed',
          { organizationId: row.organizationId, scheduleId: row.scheduleId, name: row.name, error, at: now.toISOString() },
          tx as EntityManager,
        );
      }
    });
    if (catchUp) this.#logger().info({ scheduleId: row.scheduleId, missed: missed.count }, 'a schedule missed its times while Berth was not running: one catch-up run');
  }
}
