// One send of one message through one channel, bounded by the timeout, and its outcome as Berth
// may show it: the provider's status and the start of its answer, the channel's secrets redacted.
import { ChannelError, type NotificationChannel, type NotificationMessage } from '@berth/core';
import { QUOTE_MAX, redact, secretStrings } from './redact.ts';

export interface SendOutcome {
  ok: boolean;
  /** The provider's status (null: it never answered). */
  status: number | null;
  /** What it answered, or why the send failed: at most QUOTE_MAX characters, redacted. */
  body: string;
}

export async function sendOnce(
  channel: NotificationChannel,
  settings: Record<string, unknown>,
  message: NotificationMessage,
  o: { timeoutMs: number; signingSecret?: string | null },
): Promise<SendOutcome> {
  const secrets = secretStrings(channel, settings);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // A provider that ignores its signal still ends here: the race gives up on it.
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new ChannelError(`${channel.label} did not answer within ${Math.round(o.timeoutMs / 1000)} s`));
    }, o.timeoutMs);
  });
  try {
    const answer = await Promise.race([channel.send(settings, message, { signal: controller.signal, ...(o.signingSecret ? { signingSecret: o.signingSecret } : {}) }), timedOut]);
    return { ok: true, status: answer.status, body: redact(answer.body, secrets).slice(0, QUOTE_MAX) };
  } catch (e) {
    if (e instanceof ChannelError && e.status !== null) {
      return { ok: false, status: e.status, body: redact(`${channel.label} answered ${e.status}: ${e.body}`, secrets).slice(0, QUOTE_MAX + 40) };
    }
    const text = e instanceof ChannelError ? e.message : `${channel.label}: ${(e as Error).message}`;
    return { ok: false, status: null, body: redact(text, secrets).slice(0, QUOTE_MAX + 40) };
  } finally {
    clearTimeout(timer);
  }
}
