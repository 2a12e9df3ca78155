// The notification plugin's configuration keys (section "notification"), and the outbox's backoff.
import { Type, type Static } from '@berth/core';

const NotificationConfig = Type.Object({
  notifyTimeoutSeconds: Type.Integer({
    env: 'BERTH_NOTIFY_TIMEOUT',
    minimum: 1,
    maximum: 300,
    default: 10,
    description: 'How long one send may take before it counts as a failed try (test operations too)',
  }),
  notifyMaxTries: Type.Integer({
    env: 'BERTH_NOTIFY_MAX_TRIES',
    minimum: 1,
    maximum: 50,
    default: 5,
    description: 'Tries of one delivery before it is given up as dead; 10 s after the first failure, doubling',
  }),
});
export default NotificationConfig;
export type NotificationSettings = Static<typeof NotificationConfig>;

declare module '@berth/core' {
  interface BerthConfig extends NotificationSettings {}
}

/** The first retry waits this long; each next one twice the previous. */
export const FIRST_BACKOFF_MS = 10_000;

/** How long a delivery waits after its n-th failed try (n ≥ 1): 10 s, 20 s, 40 s… */
export const backoffMs = (tries: number) => FIRST_BACKOFF_MS * 2 ** (Math.max(1, tries) - 1);
