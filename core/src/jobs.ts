// Durable jobs on the platform's PostgreSQL (Agenda with its PostgreSQL backend). Plugins
// define job kinds at registration; the scheduler starts after the HTTP server is ready
// and stops before the database closes.
import { Agenda, type Job } from 'agenda';
import { PostgresBackend } from '@agendajs/postgres-backend';
import pg, { type PoolConfig } from 'pg';
import type { Logger } from './container.ts';

export interface JobOptions {
  /** How many jobs of this kind run at once in this process. */
  concurrency?: number;
  /** After this long a job's lock expires and another worker may take it over. */
  lockLifetimeMs?: number;
}

export class JobScheduler {
  readonly agenda: Agenda;
  readonly #pool: pg.Pool;
  readonly #repeating: { interval: string; name: string }[] = [];
  readonly #log: Logger;
  #started = false;

  constructor(pool: PoolConfig, log: Logger) {
    this.#log = log;
    // Our own pool, so a connection dropped by the server is logged instead of crashing the process.
    this.#pool = new pg.Pool({ ...pool, max: 3 });
    this.#pool.on('error', err => this.#log.warn({ err }, 'job scheduler lost a database connection'));
    this.agenda = new Agenda({
      backend: new PostgresBackend({ pool: this.#pool, tableName: 'berth_jobs', channelName: 'berth_jobs' }),
      processEvery: '2 seconds',
      removeOnComplete: true,
    });
    this.agenda.on('error', (e: unknown) => this.#log.error({ err: e }, 'job scheduler error'));
  }

  define<T = unknown>(name: string, handler: (data: T, job: Job<T>) => Promise<void>, options: JobOptions = {}): void {
    this.agenda.define<T>(name, async job => {
      try {
        await handler(job.attrs.data as T, job);
      } catch (e) {
        this.#log.error({ err: e, job: name }, 'job failed');
        throw e;
      }
    }, { concurrency: options.concurrency ?? 1, ...(options.lockLifetimeMs ? { lockLifetime: options.lockLifetimeMs } : {}) });
  }

  /** A repeating job; created when the scheduler starts, replacing a stale copy left in the database. */
  every(interval: string, name: string): void {
    this.#repeating.push({ interval, name });
  }

  async now<T>(name: string, data: T): Promise<void> {
    await this.agenda.now(name, data as never);
  }

  get started(): boolean {
    return this.#started;
  }

  async start(): Promise<void> {
    await this.agenda.start();
    for (const { interval, name } of this.#repeating) {
      await this.agenda.cancel({ name });
      await this.agenda.every(interval, name);
    }
    this.#started = true;
  }

  async stop(): Promise<void> {
    if (this.#started) await this.agenda.stop(false);
    this.#started = false;
    await this.#pool.end();
  }
}
