// The audit seam. The transport runs every mutation inside an audit context (AsyncLocalStorage):
// who called, what, with which input (secrets masked), from where. The ORM subscriber adds the
// call's entry to the first flush with changes made while the context is open, so a change and its
// entry commit in one transaction; when the call settles, a failure's entry is written in a
// transaction of its own (after the rollback), and so is a success's that no flush carried (a call
// that changed only the engine). The context is closed at settle: background work the handler
// started is not the call's. The audit-log plugin fills the seam (`auditSink`): its table, and what
// a row of it holds; without it nothing is recorded.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager, EventSubscriber, FlushEventArgs, TransactionEventArgs } from '@mikro-orm/core';
import type { Principal } from '../procedure.ts';
import { redactInput } from '../redact.ts';
import { storable } from '../validation.ts';

/** Who acted, what and from where: one call of a mutation, a hook's delivery or a job acting for a user. */
export interface AuditContext {
  /** The request (or job run) id. */
  requestId: string;
  /** The procedure path (`project.create`), or the raw route or job. */
  procedure: string;
  /** `user:<id>` (through a session or an API key), `hook:<provider>`, `job:<name>` or `anonymous`. */
  actor: string;
  /** The caller, when one signed in. */
  principal: Principal | null;
  /** The organization acted on (the caller's), when known. */
  organizationId: string | null;
  /** The input's top-level fields named `id` or `…Id` that hold a string. */
  targetIds: Record<string, string>;
  /** The input with every secret masked (redactInput). */
  input: unknown;
  /** The socket's peer address. */
  address: string | null;
  userAgent: string | null;
  /** When the call started. */
  at: Date;
}

/** How a call ended. */
export type AuditOutcome = { outcome: 'success' } | { outcome: 'error'; code: string; message: string };

/** What the audit-log plugin provides: the rows it keeps. */
export interface AuditSink {
  /** One entry made in `em`'s unit of work (persisted, not flushed). */
  create(em: EntityManager, context: AuditContext, outcome: AuditOutcome): object;
  /** Writes one entry in a transaction of its own. */
  write(context: AuditContext, outcome: AuditOutcome): Promise<void>;
}

interface OpenCall {
  readonly context: AuditContext;
  /** A flush that committed (or will commit with its transaction) carries the entry. */
  carried: boolean;
  /** The transaction that carried the entry committed: no later rollback takes it back. */
  committed: boolean;
  /** Settled: later flushes in this async context are background work, not the call's. */
  closed: boolean;
}

const calls = new AsyncLocalStorage<OpenCall>();
const SUCCESS: AuditOutcome = { outcome: 'success' };

/** The fields an audit context takes from an input: its target ids and the input with its secrets masked. */
export function auditInput(raw: unknown): Pick<AuditContext, 'targetIds' | 'input'> {
  const targetIds: Record<string, string> = {};
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [k, v] of Object.entries(raw)) if ((k === 'id' || /[a-z]Id$/.test(k)) && typeof v === 'string' && v.length <= 255) targetIds[k] = storable(v);
  }
  return { targetIds, input: redactInput(raw ?? null) };
}

/** The actor of a signed-in caller, or of nobody. */
export const actorOf = (principal: Principal | null) => (principal ? `user:${principal.userId}` : 'anonymous');

/** The audit context of a procedure's call, from what the transport knows of it. */
export function callContext(call: { requestId: string; procedure: string; principal: Principal | null; raw: unknown; address: string | undefined; userAgent: string | undefined }): AuditContext {
  return {
    requestId: call.requestId,
    procedure: call.procedure,
    actor: actorOf(call.principal),
    principal: call.principal,
    organizationId: call.principal?.organizationId ?? null,
    ...auditInput(call.raw),
    address: call.address ?? null,
    userAgent: call.userAgent?.slice(0, 500) ?? null,
    at: new Date(),
  };
}

/** Runs calls in audit contexts and writes the entries no flush carried. */
export class AuditCapture {
  readonly #sink: () => AuditSink | undefined;
  readonly #log: (err: unknown, context: AuditContext) => void;

  constructor(sink: () => AuditSink | undefined, log: (err: unknown, context: AuditContext) => void) {
    // Looked up once: the plugins are set up before the first call.
    let found: { sink: AuditSink | undefined } | undefined;
    this.#sink = () => (found ??= { sink: sink() }).sink;
    this.#log = log;
  }

  /** Runs `fn` as the audited call `context`; its outcome is recorded once it settles. */
  async run<T>(context: AuditContext, fn: () => Promise<T>, errorOf: (e: unknown) => { code: string; message: string }): Promise<T> {
    const sink = this.#sink();
    if (!sink) return fn();
    const open: OpenCall = { context, carried: false, committed: false, closed: false };
    let result: T;
    try {
      result = await calls.run(open, fn);
    } catch (e) {
      open.closed = true;
      const { code, message } = errorOf(e);
      await this.#write(sink, context, { outcome: 'error', code, message: storable(String(message ?? '')) });
      throw e;
    }
    open.closed = true;
    if (!open.carried) await this.#write(sink, context, SUCCESS);
    return result;
  }

  async #write(sink: AuditSink, context: AuditContext, outcome: AuditOutcome): Promise<void> {
    // Once more on a failure (a connection dropped under load); then loudly in the log, the entry with it.
    for (let attempt = 0; ; attempt++) {
      try {
        return await sink.write(context, outcome);
      } catch (e) {
        if (attempt === 1) return this.#log(e, context);
      }
    }
  }

  /** The ORM subscriber that adds an open call's entry to its first flush with changes. */
  subscriber(): EventSubscriber {
    const sink = this.#sink;
    return {
      onFlush({ em, uow }: FlushEventArgs) {
        const open = calls.getStore();
        if (!open || open.closed || open.carried || uow.getChangeSets().length === 0) return;
        const s = sink();
        if (!s) return;
        const entry = s.create(em, open.context, SUCCESS);
        uow.computeChangeSet(entry);
        open.carried = true;
      },
      afterFlush({ em }: FlushEventArgs) {
        const open = calls.getStore();
        if (open?.carried && !em.isInTransaction()) open.committed = true;
      },
      afterTransactionCommit({ transaction }: TransactionEventArgs) {
        const open = calls.getStore();
        if (open?.carried && !transaction?.savepointName) open.committed = true;
      },
      // A rolled-back transaction may have carried the entry: it is written at settle instead (a
      // second entry of a call is better than none).
      afterTransactionRollback() {
        const open = calls.getStore();
        if (open && !open.closed && !open.committed) open.carried = false;
      },
    };
  }
}

declare module '../container.ts' {
  interface Cradle {
    /** The audit log's table and rows (the audit-log plugin); absent: nothing is recorded. */
    auditSink: AuditSink;
    /** Runs calls in audit contexts (the kernel's). */
    audit: AuditCapture;
  }
}
