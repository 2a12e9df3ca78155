// What the HTTP channels share: one request with the delivery's signal whose every failure is a
// ChannelError carrying the provider's status and the start of its answer, and the plain-text
// form of a message for channels without formatting of their own.
import { ChannelError, invalidField, type ChannelAnswer, type NotificationMessage } from '@berth/core';

/** How much of a provider's answer is kept (the plugin quotes at most 500 characters of it). */
const ANSWER_MAX = 2_000;

/** The bounds of the channels' settings (every string input has a maxLength, every list a maxItems). */
export const LIMIT = {
  /** A webhook or server URL (a token in its path included). */
  url: 2048,
  /** A token, API key, user key or password. */
  secret: 1024,
  /** A channel, chat, topic or user name. */
  name: 255,
  /** A host name (RFC 1035). */
  host: 253,
  /** A mail address (RFC 5321's path). */
  address: 320,
  /** Recipients of one mail. */
  recipients: 50,
  /** Extra request headers: how many, a name's and a value's length. */
  headers: 32,
  headerName: 256,
  headerValue: 4096,
} as const;

export interface HttpSend {
  url: string;
  method?: 'POST' | 'PUT';
  headers?: Record<string, string>;
  /** A JSON body (serialised here) or a ready text. */
  json?: unknown;
  body?: string;
}

/**
 * Sends the request; resolves with the answer when its status is 2xx and, when `accept` is given,
 * the answer passes it (Telegram answers 200 with `"ok": false` on some errors). Anything else
 * throws a ChannelError: `<label> answered <status>: <body>` or `<label> did not answer: <reason>`.
 */
export async function httpSend(label: string, req: HttpSend, signal: AbortSignal, accept?: (body: string) => boolean): Promise<ChannelAnswer> {
  let res: Response;
  try {
    res = await fetch(req.url, {
      method: req.method ?? 'POST',
      headers: { ...(req.json !== undefined ? { 'content-type': 'application/json' } : {}), 'user-agent': 'Berth', ...req.headers },
      body: req.json !== undefined ? JSON.stringify(req.json) : req.body,
      signal,
      redirect: 'manual',
    });
  } catch (e) {
    throw new ChannelError(`${label} did not answer: ${reason(e, signal)}`, { status: null, body: '' }, { cause: e });
  }
  let body: string;
  try {
    body = (await res.text()).slice(0, ANSWER_MAX);
  } catch (e) {
    throw new ChannelError(`${label} answered ${res.status} and then stopped: ${reason(e, signal)}`, { status: res.status, body: '' }, { cause: e });
  }
  const answer = { status: res.status, body };
  if (res.status < 200 || res.status >= 300 || (accept && !accept(body))) throw new ChannelError(`${label} answered ${res.status}: ${body}`, answer);
  return answer;
}

function reason(e: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer before the timeout';
  const err = e as Error & { cause?: { code?: string; message?: string } };
  return err.cause?.code ?? err.cause?.message ?? err.message;
}

/** An http(s) URL, or a 400 naming the field. */
export function httpUrl(field: string, value: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw invalidField(field, 'must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField(field, 'must be an http or https URL');
  return url;
}

/** The message as lines: title, then `Name: value` per field, then the link. */
export function plainText(m: NotificationMessage): string {
  return [m.title, ...m.fields.map(f => `${f.name}: ${f.value}`), ...(m.link ? [`Details: ${m.link}`] : [])].join('\n');
}

/** An emoji per level, for channels that show plain text. */
export const levelMark: Record<NotificationMessage['level'], string> = { success: '✅', error: '❌', warning: '⚠️', info: 'ℹ️' };

/** A colour per level (hex RGB), for channels with coloured cards. */
export const levelColour: Record<NotificationMessage['level'], number> = { success: 0x2eb67d, error: 0xe01e5a, warning: 0xecb22e, info: 0x36c5f0 };
