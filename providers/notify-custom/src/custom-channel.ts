// A custom webhook: the message as JSON (`{type, timestamp, data}`) to the user's endpoint, with
// their extra headers, signed in the Standard Webhooks format (https://www.standardwebhooks.com):
// `webhook-id` (the delivery's id, the same on every retry: receivers drop duplicates by it),
// `webhook-timestamp` (seconds) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of
// `<id>.<timestamp>.<body>` keyed by the secret's base64 part after `whsec_`).
import { createHmac } from 'node:crypto';
import { invalidField, Type, type NotificationMessage, type SendContext, type Static } from '@berth/core';
import { HttpChannel, httpUrl, LIMIT, type HttpSend } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: LIMIT.url, description: 'The URL that receives each message as a POST' }),
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: LIMIT.headerValue }), {
      maxProperties: LIMIT.headers,
      description: `Extra request headers (e.g. a bearer token of the receiver); names of ${LIMIT.headerName} characters at most`,
    }),
  ),
});
type Settings = Static<typeof Settings>;

/** Headers Berth sets itself: a user's header of the same name would break the signature or the body. */
const RESERVED = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'content-length', 'host']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The three Standard Webhooks headers for one body. */
export function signWebhook(secret: string, id: string, timestamp: Date, body: string): Record<string, string> {
  const seconds = Math.floor(timestamp.getTime() / 1000);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${seconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': `v1,${signature}` };
}

export class CustomWebhookChannel extends HttpChannel<Settings> {
  readonly id = 'custom';
  readonly label = 'Custom webhook';
  readonly procedureSuffix = 'Custom';
  readonly settings = Settings;
  readonly addressFields = ['endpoint'] as const;
  // The endpoint may carry a token in its path or query; headers hold the receiver's credentials.
  readonly secretFields = ['endpoint', 'headers'] as const;
  readonly signed = true;

  validate(s: Settings): void {
    httpUrl('endpoint', s.endpoint);
    for (const name of Object.keys(s.headers ?? {})) {
      if (!TOKEN.test(name) || name.length > LIMIT.headerName) throw invalidField(`headers.${name.slice(0, 64)}`, `is not a valid header name (${LIMIT.headerName} characters at most)`);
      if (RESERVED.has(name.toLowerCase())) throw invalidField(`headers.${name}`, 'is set by Berth (the signature and the JSON body depend on it)');
      if (/[\r\n\0]/.test(s.headers![name]!)) throw invalidField(`headers.${name}`, 'must not contain line breaks');
    }
  }

  protected request(s: Settings, m: NotificationMessage, { signingSecret }: SendContext): HttpSend {
    const body = JSON.stringify({ type: m.event, timestamp: m.at, data: { title: m.title, level: m.level, fields: m.fields, link: m.link, ...m.data } });
    const signature = signingSecret ? signWebhook(signingSecret, m.id, new Date(), body) : {};
    return { url: s.endpoint, headers: { ...s.headers, ...signature, 'content-type': 'application/json' }, body };
  }
}
