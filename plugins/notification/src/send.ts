// One send of one message through one channel, bounded by the timeout, and its outcome as Berth
// may show it: the provider's status and its error message, the channel's secrets redacted. Every
// connection goes through the outbound guard for the channel's organization (checked again at each
// send: a name may resolve elsewhere than when it was saved).
import { BerthError, ChannelError, type NotificationChannel, type NotificationMessage, type OutboundGuard } from '@berth/core';
import { QUOTE_MAX, redact, secretStrings } from './redact.ts';

export interface SendOutcome {
  ok: boolean;
  /** The provider's status (null: it never answered). */
  status: number | null;
  /** '' when sent; why the send failed (the vendor's error message, never its body): at most QUOTE_MAX characters, redacted. */
  body: string;
  /** A refusal of the guard (a 400 naming the field), for test operations to answer as it is. */
  refused?: BerthError;
}

/** Where a send goes: the guard and the organization whose rule applies. */
export interface SendTarget {
  outbound: OutboundGuard;
  organizationId: string | null;
}

/** Checks each address setting of the channel (create, update, test): a 400 naming the field. */
export async function checkAddresses(channel: NotificationChannel, settings: Record<string, unknown>, to: SendTarget): Promise<void> {
  for (const field of channel.addressFields ?? []) {
    const value = settings[field];
    if (typeof value === 'string' && value) await to.outbound.checkSaved(value, { field, organizationId: to.organizationId });
  }
}

export async function sendOnce(
  channel: NotificationChannel,
  settings: Record<string, unknown>,
  message: NotificationMessage,
  o: { timeoutMs: number; signingSecret?: string | null; to: SendTarget },
): Promise<SendOutcome> {
  const req = { field: channel.addressFields?.[0] ?? `providers.notify.${channel.id}`, organizationId: o.to.organizationId };
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
    const context = {
      signal: controller.signal,
      fetch: o.to.outbound.fetch(req),
      resolve: async (host: string, port: number) => (await o.to.outbound.check(`${host.includes(':') ? `[${host}]` : host}:${port}`, req)).address,
      ...(o.signingSecret ? { signingSecret: o.signingSecret } : {}),
    };
    await checkAddresses(channel, settings, o.to);
    const answer = await Promise.race([channel.send(settings, message, context), timedOut]);
    return { ok: true, status: answer.status, body: '' };
  } catch (e) {
    if (e instanceof BerthError) {
      const why = e.issues.map(i => i.message).join('; ') || e.message;
      return { ok: false, status: null, body: redact(`${channel.label}: ${why}`, secrets).slice(0, QUOTE_MAX + 40), refused: e };
    }
    if (e instanceof ChannelError && e.status !== null) {
      return { ok: false, status: e.status, body: redact(`${channel.label} answered ${e.status}${e.body ? `: ${e.body}` : ''}`, secrets).slice(0, QUOTE_MAX + 40) };
    }
    const text = e instanceof ChannelError ? e.message : `${channel.label}: ${(e as Error).message}`;
    return { ok: false, status: null, body: redact(text, secrets).slice(0, QUOTE_MAX + 40) };
  } finally {
    clearTimeout(timer);
  }
}
