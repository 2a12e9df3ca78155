// The query queue behind the embedded database's socket server. PGlite is one PostgreSQL
// session; pglite-socket 0.2.17 lets several connections share it by queueing their
// protocol messages, but it hands the session to another connection between any two
// messages unless a transaction is open. An extended-protocol batch (Parse, Bind,
// Describe, Execute ... Sync) keeps its unnamed statement and portal in the session until
// its Sync, so two pooled connections' batches interleaved into "unnamed prepared
// statement does not exist" (26000) or into another query's rows. And one message that
// threw left the queue marked busy forever, so every later query hung
// (electric-sql/pglite#1046, #977). This queue replaces the package's own on the server
// instance, with the same four methods its connection handlers call.
import { readFileSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** The pglite-socket release whose handlers this queue was written against (read its dist). */
export const PGLITE_SOCKET_VERSION = '0.2.17';

const SYNC = 0x53; // 'S'
// Parse, Bind, Describe, Execute, Close, Flush: the messages that open or continue a batch.
const EXTENDED = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]);
const SYNC_MESSAGE = new Uint8Array([SYNC, 0, 0, 0, 4]);

export interface PinnedQueueOptions {
  /** Where failures and stalls are reported (never SQL text or data). */
  log?: (message: string, error?: unknown) => void;
  /** How long others may wait on an idle owner before the log says why they wait; default 10 s. */
  stallWarningMs?: number;
}

interface Entry {
  handlerId: number;
  /** A protocol message, or null for "this handler is gone: give the session back". */
  message: Uint8Array | null;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: Error) => void;
}

/**
 * Runs one message at a time on the PGlite session, and keeps the session with the
 * connection that owns it: from its first extended-protocol message until that batch's
 * Sync has run, and while a transaction it opened is open. A simple Query is a batch of
 * its own.
 */
export class PinnedQueryQueue {
  readonly #db: PGlite;
  readonly #log: (message: string, error?: unknown) => void;
  readonly #stallWarningMs: number;
  #queue: Entry[] = [];
  /** The handler that owns the session; null = the next message in line may run. */
  #owner: number | null = null;
  /** The owner is inside an extended-protocol batch (no Sync yet). */
  #batchOpen = false;
  /** Handlers being detached: their late messages are refused. */
  readonly #gone = new Set<number>();
  #busy = false;
  /** The current (or last) run through the queue, for close() to wait on. */
  #running: Promise<void> = Promise.resolve();
  #closed = false;
  #stallTimer: NodeJS.Timeout | undefined;

  constructor(db: PGlite, options: PinnedQueueOptions = {}) {
    this.#db = db;
    this.#log = options.log ?? (() => {});
    this.#stallWarningMs = options.stallWarningMs ?? 10_000;
  }

  /** Called by a connection handler for each complete message; resolves with the bytes answered. */
  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    if (this.#closed || this.#gone.has(handlerId)) return Promise.reject(new Error('Handler disconnected'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ handlerId, message, onData, resolve, reject });
      this.#kick();
    });
  }

  /** Messages waiting for the session. */
  getQueueLength(): number {
    return this.#queue.length;
  }

  /** A handler is detaching: refuse and drop whatever it still has in line. */
  clearQueueForHandler(handlerId: number): void {
    this.#gone.add(handlerId);
    this.#dropMessagesOf(handlerId);
  }

  /**
   * Second half of a detach: if the handler owns the session (or its last message is still
   * running and may leave it owning it), end its batch and roll back its transaction once
   * that message is done, then let the others in. Never rejects: detach does not await
   * errors, and the database may already be closing.
   */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (!this.#closed) {
      await new Promise<number>(resolve => {
        this.#queue.push({ handlerId, message: null, onData: () => {}, resolve, reject: () => resolve(0) });
        this.#kick();
      });
    }
    this.#gone.delete(handlerId);
  }

  /** Refuse new messages, drop the waiting ones and wait for the running one: call before closing the database. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#stallTimer);
    for (const entry of this.#queue.splice(0)) {
      if (entry.message) entry.reject(new Error('Database closing'));
      else entry.resolve(0);
    }
    await this.#running;
  }

  #dropMessagesOf(handlerId: number): void {
    this.#queue = this.#queue.filter(entry => {
      if (entry.handlerId !== handlerId || !entry.message) return true;
      entry.reject(new Error('Handler disconnected'));
      return false;
    });
  }

  #kick(): void {
    if (this.#busy) return;
    this.#busy = true;
    this.#running = this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      for (let entry = this.#next(); entry; entry = this.#next()) await this.#run(entry);
    } finally {
      // Synchronously after the last #next() came back empty, so an enqueue cannot slip
      // between. (A flag, not the promise: with nothing to run this happens before #kick
      // has even stored the promise.)
      this.#busy = false;
      if (this.#queue.length && this.#owner !== null) this.#watchStall();
    }
  }

  /**
   * Others wait while the owner is idle in a transaction. If the owner is itself waiting for
   * one of them (a transaction that awaits a statement on another pooled connection), that
   * never ends: PGlite has one session. Say so in the log rather than hang in silence.
   */
  #watchStall(): void {
    if (this.#stallTimer) return;
    const owner = this.#owner;
    this.#stallTimer = setTimeout(() => {
      if (this.#owner === owner && this.#queue.length) {
        this.#log(`connection #${owner} has held the session for ${this.#stallWarningMs / 1000} s (open transaction or unfinished batch) while ${this.#queue.length} message(s) of other connections wait; `
          + 'code that waits on another connection inside a transaction cannot finish on the embedded database');
      }
    }, this.#stallWarningMs);
    this.#stallTimer.unref();
  }

  /** The owner's next message; with no owner, whoever is first. A release is harmless for a non-owner, so it never waits. */
  #next(): Entry | undefined {
    if (this.#closed) return undefined;
    const owner = this.#owner;
    const i = this.#queue.findIndex(e => owner === null || e.handlerId === owner || e.message === null);
    return i === -1 ? undefined : this.#queue.splice(i, 1)[0];
  }

  async #run(entry: Entry): Promise<void> {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
    const { handlerId, message } = entry;
    if (!message) {
      if (this.#owner === handlerId) await this.#releaseSession(`handler #${handlerId} disconnected`);
      entry.resolve(0);
      return;
    }
    let bytes = 0;
    try {
      await this.#exec(message, data => {
        bytes += data.length;
        entry.onData(data);
      });
    } catch (error) {
      // Not a SQL error (those come back as ErrorResponse in the stream): PGlite itself
      // failed. The handler drops its connection on this rejection, so finish what it left
      // open on the session, refuse its other messages, and carry on with everyone else.
      this.#log(`message from handler #${handlerId} failed`, error);
      if (EXTENDED.has(message[0]!)) this.#batchOpen = true;
      this.#owner = handlerId;
      await this.#releaseSession(`handler #${handlerId} failed`);
      this.#dropMessagesOf(handlerId);
      entry.reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (EXTENDED.has(message[0]!)) this.#batchOpen = true;
    else if (message[0] === SYNC) this.#batchOpen = false;
    this.#owner = this.#batchOpen || this.#inTransaction() ? handlerId : null;
    entry.resolve(bytes);
  }

  /** Close the owner's batch and transaction so the next connection starts from a clean session. */
  async #releaseSession(why: string): Promise<void> {
    try {
      // A Sync ends the implicit transaction and the skip-until-Sync state after an error.
      if (this.#batchOpen) await this.#exec(SYNC_MESSAGE, () => {});
      if (this.#inTransaction()) await this.#exec(simpleQuery('ROLLBACK'), () => {});
    } catch (error) {
      this.#log(`could not reset the session (${why})`, error);
    }
    this.#batchOpen = false;
    this.#owner = null;
  }

  #exec(message: Uint8Array, onRawData: (data: Uint8Array) => void): Promise<void> {
    return this.#db.runExclusive(() => this.#db.execProtocolRawStream(message, { onRawData }));
  }

  #inTransaction(): boolean {
    try {
      return this.#db.isInTransaction();
    } catch {
      return false; // closed database
    }
  }
}

function simpleQuery(sql: string): Uint8Array {
  const text = Buffer.from(`${sql}\0`);
  const message = Buffer.alloc(5 + text.length);
  message[0] = 0x51; // 'Q'
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

/**
 * Swap the server's query queue for a PinnedQueryQueue. Call before start(). Fails at boot
 * when the installed pglite-socket is not the release this queue was checked against, or
 * its server no longer has the queue where 0.2.17 keeps it.
 */
export function installPinnedQueue(server: PGLiteSocketServer, db: PGlite, options?: PinnedQueueOptions): PinnedQueryQueue {
  const installed = installedPgliteSocketVersion();
  if (installed !== PGLITE_SOCKET_VERSION) {
    throw new Error(`The embedded database's query queue was written for @electric-sql/pglite-socket ${PGLITE_SOCKET_VERSION}, but ${installed} is installed: `
      + 'check whether that release fixes electric-sql/pglite#1046 and update core/src/persistence/pglite-queue.ts (or drop it)');
  }
  const target = server as unknown as { queryQueue?: Record<string, unknown> };
  const current = target.queryQueue;
  const methods = ['enqueue', 'getQueueLength', 'clearQueueForHandler', 'clearTransactionIfNeeded'];
  if (!current || methods.some(m => typeof current[m] !== 'function')) {
    throw new Error(`@electric-sql/pglite-socket ${installed}: the server has no queryQueue with ${methods.join(', ')}; core/src/persistence/pglite-queue.ts no longer fits it`);
  }
  const queue = new PinnedQueryQueue(db, options);
  target.queryQueue = queue as unknown as Record<string, unknown>;
  return queue;
}

function installedPgliteSocketVersion(): string {
  // The package exports no ./package.json; its entry point is dist/index.js.
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@electric-sql/pglite-socket')), 'utf8')) as { name?: string; version?: string };
  if (pkg.name !== '@electric-sql/pglite-socket') throw new Error(`could not find @electric-sql/pglite-socket's package.json (found ${pkg.name})`);
  return String(pkg.version);
}
