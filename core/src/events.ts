// The in-process event bus: workloads announce what happened, notification channels and
// other plugins subscribe. Two kinds of subscriber:
// - a listener (on) runs after the emitter moved on; a failing one is logged, never propagated;
// - a durable subscriber (onDurable) stores what it must not lose (an outbox row, say). An emitter
//   that calls emitDurable awaits it, with its own EntityManager: inside the emitter's transaction
//   when one is open, so the stored row commits or rolls back with the change that caused it, and
//   otherwise before the emitter returns. Its failure is the emitter's. A plain emit still reaches
//   durable subscribers, after the emitter moved on, with an EntityManager of their own.
// The bus knows nothing of what subscribers store. What runs after the emitter moved on is tracked:
// the kernel's stop waits for it (settled) before it closes the database, so a subscriber's write
// is neither cut off nor left holding a connection the closing pool waits for.
import { EventEmitter } from 'node:events';
import type { EntityManager } from '@mikro-orm/postgresql';

/** Event name → payload. Plugins add their events by declaration merging. */
export interface BerthEvents {
  platformStart: { at: string };
  /** An organization was created (the kernel's table; by the first admin's sign-up or organization.create). */
  organizationCreated: { organizationId: string; at: string };
  /** An organization was deleted (after its workloads were removed). */
  organizationRemoved: { organizationId: string; at: string };
}

type Durable<K extends keyof BerthEvents> = (payload: BerthEvents[K], em: EntityManager) => Promise<void>;

export class EventBus {
  readonly #emitter = new EventEmitter();
  readonly #durable = new Map<keyof BerthEvents, Set<Durable<any>>>();
  readonly #onError: (e: unknown, event: string) => void;
  readonly #em: () => EntityManager;
  /** Subscribers and listeners started after their emitter moved on and not yet done. */
  readonly #running = new Set<Promise<void>>();
  /** `em` gives a fresh EntityManager to durable subscribers of an emit that brought none. */
  constructor(onError: (e: unknown, event: string) => void, em: () => EntityManager) {
    this.#onError = onError;
    this.#em = em;
  }
  on<K extends keyof BerthEvents>(event: K, listener: (payload: BerthEvents[K]) => void | Promise<void>): () => void {
    const wrapped = (payload: BerthEvents[K]) => this.#later(event, () => listener(payload));
    this.#emitter.on(event, wrapped);
    return () => this.#emitter.off(event, wrapped);
  }
  /** A subscriber whose write emitDurable awaits, with the emitter's EntityManager (see above). */
  onDurable<K extends keyof BerthEvents>(event: K, subscriber: Durable<K>): () => void {
    const set = this.#durable.get(event) ?? new Set();
    this.#durable.set(event, set);
    set.add(subscriber);
    return () => void set.delete(subscriber);
  }
  /** Announces; durable subscribers store after the emitter moved on (nothing is awaited, a failure is logged). */
  emit<K extends keyof BerthEvents>(event: K, payload: BerthEvents[K]): void {
    for (const subscriber of this.#durable.get(event) ?? []) this.#later(event, () => subscriber(payload, this.#em()));
    this.#emitter.emit(event, payload);
  }
  /**
   * Announces what must not be lost: durable subscribers store it with `em` (the emitter's
   * transaction when it has one open; a fresh EntityManager when none is given) and this resolves
   * once they have; a failure rejects (the emitter's transaction then rolls back). Listeners run
   * after, as with emit.
   */
  async emitDurable<K extends keyof BerthEvents>(event: K, payload: BerthEvents[K], em?: EntityManager): Promise<void> {
    for (const subscriber of this.#durable.get(event) ?? []) await subscriber(payload, em ?? this.#em());
    this.#emitter.emit(event, payload);
  }
  /**
   * Resolves once every subscriber and listener started after its emitter moved on is done (those
   * they start in turn too), or after `withinMs` — whichever comes first: a listener that hangs
   * must not hold a stop forever. True when all were done.
   */
  async settled(withinMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>(resolve => (timer = setTimeout(() => resolve(false), withinMs)));
    const all = (async () => {
      while (this.#running.size) await Promise.all([...this.#running]);
      return true as const;
    })();
    try {
      return await Promise.race([all, late]);
    } finally {
      clearTimeout(timer);
    }
  }
  /** Runs fn after the caller moved on; a failure is logged, never propagated. */
  #later(event: string, fn: () => void | Promise<void>): void {
    const run = new Promise<void>(resolve => queueMicrotask(resolve))
      .then(fn)
      .then(
        () => {},
        e => this.#onError(e, event),
      )
      .finally(() => this.#running.delete(run));
    this.#running.add(run);
  }
}
