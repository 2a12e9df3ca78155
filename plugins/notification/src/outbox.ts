// The outbox. An event becomes one `notification_deliveries` row per channel that hears it,
// written before anything is sent; those rows are the durable queue. A worker in every process
// that runs jobs claims due rows (FOR UPDATE SKIP LOCKED, so processes never share one), sends
// each with the timeout, and records the outcome: sent; or back to pending 10 s later, doubling
// each time; or dead after notifyMaxTries. A row left `sending` by a process that died is taken
// over once its lock passes. The rows are written by a durable subscriber of the bus: an emitter
// that calls emitDurable has them in its own transaction (or stored before it returns), so a crash
// between the change and the send loses nothing. Sending is never awaited by a deploy, a backup or
// the boot: the worker runs on its own timers.
import { newId, type BerthEvents, type Cradle, type EntityManager, type EventBus, type Logger, type SecretBox } from '@berth/core';
import { Delivery, Notification, type DeliveryRow } from './entities.ts';
import { EVENT_TOGGLE, NOTIFIED_EVENTS, type NotifiedEvent } from './events.ts';
import type { MessageRenderer, RenderedMessage } from './messages.ts';
import { settingsOf } from './records.ts';
import { sendOnce } from './send.ts';
import { backoffMs, type NotificationSettings } from './config.ts';

/** When, after deliveries stored inside an emitter's transaction, the worker looks for them (their commit is not observable here). */
const COMMIT_WAKE_MS = [200, 1_000, 4_000];
/** Deliveries in flight at once in one process. */
const MAX_IN_FLIGHT = 16;
/** How long a claim holds beyond the send's timeout before another worker may take the row over. */
const LOCK_MARGIN_MS = 30_000;
/** The longest the worker sleeps: rows written by another process are found at least this often. */
const SWEEP_MS = 60_000;
/** How long the log keeps a delivery that ended (sent or dead), and how often it is pruned. */
export const KEEP_FINISHED_DAYS = 30;
const PRUNE_EVERY_MS = 60 * 60_000;

export interface OutboxDeps {
  config: NotificationSettings;
  orm: () => Cradle['orm'];
  logger: () => Logger;
  secrets: SecretBox;
  providers: () => Cradle['providers'];
  renderer: MessageRenderer;
  outbound: () => Cradle['outbound'];
}

interface Claimed {
  delivery_id: string;
  notification_id: string;
  tries: number;
  message: RenderedMessage;
}

export class NotificationOutbox {
  readonly #deps: OutboxDeps;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #loop: Promise<void> | null = null;
  #again = false;
  #prunedAt = 0;
  #started = false;
  #closing = false;

  constructor(deps: OutboxDeps) {
    this.#deps = deps;
  }

  /** notifyTimeoutSeconds: test sends use it too. */
  get timeoutSeconds(): number {
    return this.#deps.config.notifyTimeoutSeconds;
  }

  /** Subscribes durably to every notified event of the bus: its deliveries are stored with the emitter's EntityManager. */
  listen(events: EventBus): void {
    for (const event of NOTIFIED_EVENTS) events.onDurable(event, (payload, em) => this.record(event, payload, em).then(() => {}));
  }

  /**
   * Stores one delivery per channel whose toggle of the event is on (the event's organization's
   * channels; the instance operators' organization's for an event of the platform), with `within` (inside its
   * transaction when one is open; its own unit of work is left alone), then wakes the worker (at
   * once when nothing waits for a commit, else shortly after). Answers how many were stored.
   */
  async record<K extends NotifiedEvent>(event: K, payload: BerthEvents[K], within?: EntityManager): Promise<number> {
    const em = within ? within.fork({ keepTransactionContext: true }) : this.#deps.orm().em.fork();
    const inTransaction = Boolean(within?.isInTransaction());
    // An event of this machine (no organization) is the instance operators' alone.
    const organizationId = (payload as { organizationId?: string | null }).organizationId ?? (await this.#deps.outbound().instanceOrganizationId());
    if (!organizationId) return 0;
    const subscribed = await em.find(Notification, { [EVENT_TOGGLE[event]]: true, organizationId });
    if (!subscribed.length) return 0;
    const message = await this.#deps.renderer.render(event, payload, em);
    const now = new Date();
    for (const n of subscribed) {
      em.create(Delivery, {
        deliveryId: newId(),
        notificationId: n.notificationId,
        organizationId: n.organizationId,
        event,
        message: message,
        state: 'pending',
        tries: 0,
        nextAttemptAt: now,
        lockedUntil: null,
        lastAttemptAt: null,
        sentAt: null,
        answerStatus: null,
        answer: null,
        createdAt: now,
      });
    }
    await em.flush();
    // Rows of an open transaction are not visible before its commit; the worker looks again shortly.
    if (inTransaction) for (const ms of COMMIT_WAKE_MS) setTimeout(() => this.wake(), ms).unref();
    else this.wake();
    return subscribed.length;
  }

  /** Starts the worker in this process (when it runs jobs): what was due before a restart goes out now. */
  start(): void {
    this.#started = true;
    this.wake();
  }

  /** Looks for due deliveries now (after a record, a finished send, a timer). Never throws. */
  wake(): void {
    if (!this.#started || this.#closing) return;
    if (this.#loop) {
      this.#again = true;
      return;
    }
    this.#loop = this.#work().finally(() => {
      this.#loop = null;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  /** Graceful stop: claim nothing more and let what is being sent finish (bounded by the timeout). */
  async shutdown(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#timer);
    await this.#loop;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#inFlight]),
      new Promise(r => {
        timer = setTimeout(r, this.#deps.config.notifyTimeoutSeconds * 1000 + 1000);
      }),
    ]);
    clearTimeout(timer);
  }

  async #work(): Promise<void> {
    clearTimeout(this.#timer);
    try {
      while (!this.#closing && this.#inFlight.size < MAX_IN_FLIGHT) {
        const claimed = await this.#claim(MAX_IN_FLIGHT - this.#inFlight.size);
        if (!claimed.length) break;
        for (const row of claimed) {
          const sending: Promise<void> = this.#deliver(row)
            .catch(e => this.#deps.logger().warn({ err: e, deliveryId: row.delivery_id }, 'a notification delivery could not record its outcome; it is retried when its lock passes'))
            .finally(() => {
              this.#inFlight.delete(sending);
              this.wake();
            });
          this.#inFlight.add(sending);
        }
      }
      if (!this.#closing && Date.now() - this.#prunedAt > PRUNE_EVERY_MS) await this.#prune();
      if (!this.#closing) this.#arm(await this.#nextDue());
    } catch (e) {
      if (this.#closing) return;
      this.#deps.logger().warn({ err: e }, 'the notification worker could not read its outbox; trying again shortly');
      this.#arm(5_000);
    }
  }

  #arm(delayMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.wake(), Math.max(0, Math.min(delayMs, SWEEP_MS)));
    this.#timer.unref();
  }

  /** Takes up to `limit` due deliveries (and rows whose sender died) for this process; counts the try. */
  async #claim(limit: number): Promise<Claimed[]> {
    const now = new Date();
    const lockedUntil = new Date(now.getTime() + this.#deps.config.notifyTimeoutSeconds * 1000 + LOCK_MARGIN_MS);
    const conn = this.#deps.orm().em.fork().getConnection();
    return conn.execute<Claimed[]>(
      `update notification_deliveries set state = 'sending', tries = tries + 1, last_attempt_at = ?, locked_until = ?
        where delivery_id in (
          select delivery_id from notification_deliveries
           where (state = 'pending' and next_attempt_at <= ?) or (state = 'sending' and locked_until < ?)
           order by next_attempt_at
           limit ?
           for update skip locked)
      returning delivery_id, notification_id, tries, message`,
      [now, lockedUntil, now, now, limit],
    );
  }

  /** Forgets deliveries that ended more than KEEP_FINISHED_DAYS ago. */
  async #prune(): Promise<void> {
    this.#prunedAt = Date.now();
    const before = new Date(Date.now() - KEEP_FINISHED_DAYS * 86_400_000);
    await this.#deps
      .orm()
      .em.fork()
      .nativeDelete(Delivery, { state: { $in: ['sent', 'dead'] }, createdAt: { $lt: before } });
  }

  /** How long until the next delivery is due (or a stale claim may be taken over). */
  async #nextDue(): Promise<number> {
    const conn = this.#deps.orm().em.fork().getConnection();
    const [row] = await conn.execute<{ next: Date | null }[]>(
      `select min(case when state = 'pending' then next_attempt_at else locked_until end) as next
         from notification_deliveries where state in ('pending', 'sending')`,
    );
    return row?.next ? new Date(row.next).getTime() - Date.now() : SWEEP_MS;
  }

  async #deliver(row: Claimed): Promise<void> {
    const { orm, providers, secrets, config } = this.#deps;
    const em = orm().em.fork();
    const n = await em.findOne(Notification, { notificationId: row.notification_id });
    if (!n) return; // removed meanwhile: its deliveries went with it
    const registry = providers();
    const outcome = registry.has('notify', n.notificationType)
      ? await sendOnce(
          registry.get('notify', n.notificationType),
          settingsOf(n, secrets),
          { ...row.message, id: row.delivery_id },
          {
            timeoutMs: config.notifyTimeoutSeconds * 1000,
            signingSecret: n.signingSecret ? secrets.decrypt(n.signingSecret) : null,
            to: { outbound: this.#deps.outbound(), organizationId: n.organizationId },
          },
        )
      : { ok: false, status: null, body: `The channel ${n.notificationType} is not enabled on this Berth (providers.notify.${n.notificationType})` };
    const now = new Date();
    const finished = outcome.ok || row.tries >= config.notifyMaxTries || !registry.has('notify', n.notificationType);
    const update: Partial<DeliveryRow> = {
      state: outcome.ok ? 'sent' : finished ? 'dead' : 'pending',
      lockedUntil: null,
      answerStatus: outcome.status,
      answer: outcome.body,
      sentAt: outcome.ok ? now : null,
      nextAttemptAt: finished ? now : new Date(now.getTime() + backoffMs(row.tries)),
    };
    // Only while the claim is still ours (a worker that took it over after the lock passed wins).
    await em.nativeUpdate(Delivery, { deliveryId: row.delivery_id, state: 'sending', tries: row.tries }, update);
    if (!outcome.ok) this.#deps.logger().info({ deliveryId: row.delivery_id, channel: n.notificationType, tries: row.tries, state: update.state }, 'a notification was not delivered');
  }
}
