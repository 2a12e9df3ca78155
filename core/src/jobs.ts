// Durable jobs on the platform's PostgreSQL (Agenda with its PostgreSQL backend). Plugins
// define job kinds at registration; Agenda connects when the scheduler starts (after the
// HTTP server is ready) or when a job is first queued, and stops before the database closes.
import { Agenda, type Job } from 'agenda';
import { PostgresBackend } from '@agendajs/postgres-backend';
import pg, { type PoolConfig } from 'pg';
import type { Logger } from './container.ts';

export interface JobOptions {
  /** How many jobs of this kind run at once in this process. */
  concurrency?: number;
  /** After this long a job's lock expires and another worker may take it over. */
  lockLifetimeMs?: number;
  /** How many jobs of this kind this process locks (takes off the queue) at once; default no limit. */
  lockLimit?: number;
}

type Definition = { name: string; handler: (data: any, job: Job<any>) => Promise<void>; options: JobOptions };

export class JobScheduler {
  readonly #poolConfig: PoolConfig;
  readonly #log: Logger;
  readonly #definitions: Definition[] = [];
  readonly #repeating: { interval: string; name: string }[] = [];
  #pool?: pg.Pool;
  #agenda?: Agenda;
  #backend?: PostgresBackend;
  #processing = false;

  constructor(pool: PoolConfig, log: Logger) {
    this.#poolConfig = pool;
    this.#log = log;
  }

  define<T = unknown>(name: string, handler: (data: T, job: Job<T>) => Promise<void>, options: JobOptions = {}): void {
    const definition = { name, handler, options };
    this.#definitions.push(definition);
    if (this.#agenda) this.#register(this.#agenda, definition);
  }

  #register(agenda: Agenda, { name, handler, options }: Definition): void {
    agenda.define(
      name,
      async (job: Job<unknown>) => {
        try {
          await handler(job.attrs.data, job);
        } catch (e) {
          this.#log.error({ err: e, job: name }, 'job failed');
          throw e;
        }
      },
      { concurrency: options.concurrency ?? 1, ...(options.lockLifetimeMs ? { lockLifetime: options.lockLifetimeMs } : {}), ...(options.lockLimit ? { lockLimit: options.lockLimit } : {}) },
    );
  }

  /**
   * A repeating job; created when the scheduler starts (first run one interval later), replacing
   * a stale copy left in the database. (The liveness timer Agenda leaves per run is unref'd:
   * patches/agenda@6.2.6.patch.)
   */
  every(interval: string, name: string): void {
    this.#repeating.push({ interval, name });
  }

  async now<T>(name: string, data: T): Promise<void> {
    await (await this.#connect()).now(name, data);
  }

  /**
   * Removes queued jobs from the database: those of the kind `name` (if given) whose data
   * contains `data` (if given). A job already taken by a worker still runs. Answers how many.
   */
  async cancel(query: { name?: string; data?: Record<string, unknown> }): Promise<number> {
    if (query.name === undefined && query.data === undefined) return 0;
    return (await this.#connect()).cancel({ ...(query.name !== undefined ? { name: query.name } : {}), ...(query.data !== undefined ? { data: query.data } : {}) });
  }

  get processing(): boolean {
    return this.#processing;
  }

  async #connect(): Promise<Agenda> {
    if (!this.#agenda) {
      // Our own pool, so a connection dropped by the server is logged instead of crashing the process.
      this.#pool = new pg.Pool({ ...this.#poolConfig, max: 3 });
      this.#pool.on('error', err => this.#log.warn({ err }, 'job scheduler lost a database connection'));
      const backend = new PostgresBackend({ pool: this.#pool, tableName: 'berth_jobs', channelName: 'berth_jobs' });
      // LISTEN/NOTIFY wakes idle workers at once; a dropped listening connection is only logged.
      (backend.notificationChannel as NodeJS.EventEmitter | undefined)?.on('error', err => this.#log.warn({ err }, 'job notifications lost their connection'));
      this.#backend = backend;
      const agenda = new Agenda({ backend, processEvery: '2 seconds', removeOnComplete: true });
      agenda.on('error', (e: unknown) => this.#log.error({ err: e }, 'job scheduler error'));
      for (const d of this.#definitions) this.#register(agenda, d);
      this.#agenda = agenda;
    }
    await this.#agenda.ready;
    return this.#agenda;
  }

  /** Starts processing jobs in this process. */
  async start(): Promise<void> {
    const agenda = await this.#connect();
    // Replace the stale copies first: a copy left by the previous process has a nextRunAt in the
    // past, and a started Agenda would run it at once instead of one interval later.
    for (const { interval, name } of this.#repeating) {
      await agenda.cancel({ name });
      await agenda.every(interval, name, undefined, { skipImmediate: true });
    }
    await agenda.start();
    this.#processing = true;
  }

  async stop(): Promise<void> {
    const agenda = this.#agenda;
    if (!agenda) return;
    this.#agenda = undefined;
    await agenda.ready.catch(() => {});
    if (this.#processing) await agenda.stop(false);
    this.#processing = false;
    await this.#backend?.notificationChannel?.disconnect();
    await this.#pool?.end();
  }
}

declare module './container.ts' {
  interface Cradle {
    jobs: JobScheduler;
  }
}
