// The in-process event bus: workloads announce what happened, notification channels and
// other plugins subscribe. Listeners run after the emitter moved on; a failing listener
// is logged, never propagated.
import { EventEmitter } from 'node:events';

/** Event name → payload. Plugins add their events by declaration merging. */
export interface BerthEvents {
  platformStart: { at: string };
}

export class EventBus {
  readonly #emitter = new EventEmitter();
  readonly #onError: (e: unknown, event: string) => void;
  constructor(onError: (e: unknown, event: string) => void) {
    this.#onError = onError;
  }
  on<K extends keyof BerthEvents>(event: K, listener: (payload: BerthEvents[K]) => void | Promise<void>): () => void {
    const wrapped = (payload: BerthEvents[K]) => {
      queueMicrotask(() => {
        Promise.resolve().then(() => listener(payload)).catch(e => this.#onError(e, event));
      });
    };
    this.#emitter.on(event, wrapped);
    return () => this.#emitter.off(event, wrapped);
  }
  emit<K extends keyof BerthEvents>(event: K, payload: BerthEvents[K]): void {
    this.#emitter.emit(event, payload);
  }
}
