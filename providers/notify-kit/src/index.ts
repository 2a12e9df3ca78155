// What the HTTP channels share: one request through the delivery's guarded fetch and signal whose
// every failure is a ChannelError carrying the provider's status and its documented error message
// (never an arbitrary body: a URL may point at a service that answers what it should not), and the
// plain-text form of a message for channels without formatting of their own; the formatting pieces
// several channels use (the marked title, Slack-shaped attachments, HTML escaping); and the channel
// bases: one HTTP request a message (HttpChannel), at an API address the operator sets
// (ApiUrlChannel), or to one incoming-webhook URL (WebhookUrlChannel).
import { ChannelError, invalidField, vendorMessage, type ChannelAnswer, type NotificationChannel, type NotificationMessage, type SendContext } from '@berth/core';

/** How much of a vendor's error message is kept. */
const MESSAGE_MAX = 200;

/**
 * The message field of a vendor's documented error answer: Slack's API and ntfy `error`, Telegram
 * `description`, Discord, Resend and Gotify `message`/`errorDescription`, Lark `msg`, Pushover
 * `errors[0]`. A plain-text answer counts only as an error code (Slack's webhooks answer
 * `invalid_token`, `no_service`...). Anything else is not kept.
 */
export function errorMessageOf(body: string): string | null {
  const text = body.trim();
  if (/^[a-z][a-z0-9_]{1,63}$/.test(text)) return text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (!json || typeof json !== 'object') return null;
  const o = json as Record<string, unknown>;
  const errors = Array.isArray(o.errors) ? o.errors[0] : undefined;
  for (const v of [o.description, o.errorDescription, o.message, o.msg, o.error, errors]) {
    const m = vendorMessage(v, MESSAGE_MAX);
    if (m) return m;
  }
  return null;
}

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
export async function httpSend(label: string, req: HttpSend, context: SendContext, accept?: (body: string) => boolean): Promise<ChannelAnswer> {
  const { signal } = context;
  let res: Response;
  try {
    res = await (context.fetch ?? fetch)(req.url, {
      method: req.method ?? 'POST',
      headers: { ...(req.json !== undefined ? { 'content-type': 'application/json' } : {}), 'user-agent': 'Berth', ...req.headers },
      body: req.json !== undefined ? JSON.stringify(req.json) : req.body,
      signal,
      redirect: 'manual',
    });
  } catch (e) {
    // A refused address (a 400 naming the field) stays what it is.
    if ((e as { code?: unknown }).code === 'BAD_REQUEST') throw e;
    throw new ChannelError(`${label} did not answer: ${reason(e, signal)}`, { status: null, body: '' }, { cause: e });
  }
  let body: string;
  try {
    body = (await res.text()).slice(0, 64 * 1024);
  } catch (e) {
    throw new ChannelError(`${label} answered ${res.status} and then stopped: ${reason(e, signal)}`, { status: res.status, body: '' }, { cause: e });
  }
  if (res.status < 200 || res.status >= 300 || (accept && !accept(body))) {
    const message = errorMessageOf(body) ?? '';
    throw new ChannelError(`${label} answered ${res.status}${message ? `: ${message}` : ''}`, { status: res.status, body: message });
  }
  return { status: res.status, body: '' };
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

/** The title behind the level's emoji, as the channels that show one put it. */
export const markedTitle = (m: NotificationMessage): string => `${levelMark[m.level]} ${m.title}`;

/** A colour per level as CSS hex (#rrggbb), for Slack-shaped attachments. */
export const levelHex = (level: NotificationMessage['level']): string => `#${levelColour[level].toString(16).padStart(6, '0')}`;

/** A Slack-compatible attachment's colour and fields (Slack's incoming webhooks, and Mattermost's, which take the same payload). */
export function slackAttachment(m: NotificationMessage) {
  return { color: levelHex(m.level), fields: m.fields.map(f => ({ title: f.name, value: f.value, short: f.value.length < 40 })) };
}

/** Text for an HTML text node (&, < and >; Telegram's and Pushover's HTML take no more). */
export const htmlText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Text for HTML anywhere, an attribute's quoted value included. */
export const htmlEscape = (s: string): string => htmlText(s).replace(/"/g, '&quot;');

/** A path on a server whose address is a setting or an option (a trailing slash on it is not doubled). */
export const urlPath = (base: string, path: string): string => `${base.replace(/\/+$/, '')}${path}`;

/**
 * An `accept` for a service that answers a refusal with a 2xx status and says so in its JSON body
 * (Lark's `code`, Pushover's `status`, Telegram's `ok`): a body that is not JSON is no acceptance.
 */
export function jsonAnswer(taken: (answer: Record<string, unknown>) => boolean): (body: string) => boolean {
  return body => {
    try {
      const answer: unknown = JSON.parse(body);
      return answer !== null && taken(answer as Record<string, unknown>);
    } catch {
      return false;
    }
  };
}

/**
 * A channel whose message is one HTTP request through httpSend: a channel gives its identity, its
 * settings schema and the request for a message; `accept` is for a service that answers an error
 * with a 2xx status.
 */
export abstract class HttpChannel<S extends Record<string, unknown>> implements NotificationChannel<S> {
  abstract readonly id: string;
  abstract readonly label: string;
  abstract readonly procedureSuffix: string;
  abstract readonly settings: NotificationChannel<S>['settings'];
  abstract readonly secretFields: readonly string[];

  /** The request that sends a message (the context gives a signed channel its signing secret). */
  protected abstract request(s: S, m: NotificationMessage, context: SendContext): HttpSend;

  /** Whether a 2xx answer's body says it was taken (absent: any 2xx is). */
  protected readonly accept?: (body: string) => boolean;

  send(s: S, m: NotificationMessage, context: SendContext): Promise<ChannelAnswer> {
    return httpSend(this.label, this.request(s, m, context), context, this.accept);
  }
}

/**
 * An HttpChannel of a service at one API address (Telegram's Bot API, Pushover, Resend): the
 * address is the provider's option, so an operator can point it at a local server or a test sink.
 */
export abstract class ApiUrlChannel<S extends Record<string, unknown>> extends HttpChannel<S> {
  /** The API's root, without a trailing slash. */
  protected readonly apiUrl: string;

  constructor(apiUrl: string) {
    super();
    this.apiUrl = apiUrl.replace(/\/+$/, '');
  }
}

/**
 * A channel that posts one JSON body to an incoming-webhook URL (Slack, Discord, Mattermost, Lark,
 * Teams): the URL is the only setting Berth connects to and, since it carries the channel's token,
 * a secret; it must be an http(s) URL. A channel gives its identity, its settings schema and its
 * body.
 */
export abstract class WebhookUrlChannel<S extends { webhookUrl: string }> extends HttpChannel<S> {
  readonly addressFields = ['webhookUrl'] as const;
  readonly secretFields = ['webhookUrl'] as const;

  validate(s: S): void {
    httpUrl('webhookUrl', s.webhookUrl);
  }

  /** The JSON the service takes for a message. */
  protected abstract body(s: S, m: NotificationMessage): unknown;

  protected request(s: S, m: NotificationMessage): HttpSend {
    return { url: s.webhookUrl, json: this.body(s, m) };
  }
}
