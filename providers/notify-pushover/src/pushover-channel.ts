// Pushover's POST /1/messages.json: the application's token and the user (or group) key, a
// title, an HTML message, a priority (-2..2; emergency, 2, repeats every `retry` seconds until
// `expire`). It answers `{"status": 1}`, or 4xx with `{"status": 0, "errors": […]}`.
import { invalidField, Type, type NotificationMessage, type Static } from '@berth/core';
import { ApiUrlChannel, htmlText, jsonAnswer, LIMIT, markedTitle, type HttpSend } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  userKey: Type.String({ minLength: 1, maxLength: LIMIT.secret, description: 'The user or group key' }),
  apiToken: Type.String({ minLength: 1, maxLength: LIMIT.secret, description: "The application's API token" }),
  priority: Type.Optional(Type.Integer({ minimum: -2, maximum: 2, default: 0 })),
  retry: Type.Optional(Type.Union([Type.Integer({ minimum: 30 }), Type.Null()], { description: 'Emergency priority: seconds between repeats (30 at least)' })),
  expire: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10800 }), Type.Null()], { description: 'Emergency priority: seconds until repeats stop (3 hours at most)' })),
});
type Settings = Static<typeof Settings>;

export class PushoverChannel extends ApiUrlChannel<Settings> {
  readonly id = 'pushover';
  readonly label = 'Pushover';
  readonly procedureSuffix = 'Pushover';
  readonly settings = Settings;
  readonly secretFields = ['userKey', 'apiToken'] as const;
  protected readonly accept = jsonAnswer(answer => answer.status === 1);

  validate(s: Settings): void {
    if (s.priority === 2 && (s.retry == null || s.expire == null)) throw invalidField('retry', 'retry and expire are required for emergency priority (2)');
  }

  protected request(s: Settings, m: NotificationMessage): HttpSend {
    const priority = s.priority ?? 0;
    return {
      url: `${this.apiUrl}/1/messages.json`,
      json: {
        token: s.apiToken,
        user: s.userKey,
        title: markedTitle(m).slice(0, 250),
        message:
          m.fields
            .map(f => `<b>${htmlText(f.name)}:</b> ${htmlText(f.value)}`)
            .join('\n')
            .slice(0, 1024) || htmlText(m.title),
        html: 1,
        priority,
        ...(priority === 2 ? { retry: s.retry, expire: s.expire } : {}),
        ...(m.link ? { url: m.link, url_title: 'Details' } : {}),
        timestamp: Math.floor(Date.parse(m.at) / 1000),
      },
    };
  }
}
