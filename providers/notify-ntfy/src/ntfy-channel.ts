// ntfy's JSON publishing: POST to the server's root with `{topic, title, message, priority, tags,
// click}` (JSON, so titles with any characters need no header encoding), a bearer access token
// when the topic is protected. ntfy answers 200 with the message, 401/403 for a refused token.
import { invalidField, Type, type NotificationMessage, type Static } from '@berth/core';
import { HttpChannel, httpUrl, LIMIT, urlPath, type HttpSend } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  serverUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: 'The ntfy server (https://ntfy.sh or your own)' }),
  topic: Type.String({ minLength: 1, maxLength: 64 }),
  accessToken: Type.Optional(Type.String({ maxLength: LIMIT.secret, description: 'An access token (tk_…) for a protected topic' })),
  priority: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, default: 3 })),
});
type Settings = Static<typeof Settings>;
const TOPIC = /^[-_A-Za-z0-9]{1,64}$/;
const tags: Record<NotificationMessage['level'], string> = { success: 'white_check_mark', error: 'x', warning: 'warning', info: 'information_source' };

export class NtfyChannel extends HttpChannel<Settings> {
  readonly id = 'ntfy';
  readonly label = 'ntfy';
  readonly procedureSuffix = 'Ntfy';
  readonly settings = Settings;
  readonly addressFields = ['serverUrl'] as const;
  readonly secretFields = ['accessToken'] as const;

  validate(s: Settings): void {
    httpUrl('serverUrl', s.serverUrl);
    if (!TOPIC.test(s.topic)) throw invalidField('topic', 'may hold letters, digits, - and _ only (at most 64)');
  }

  protected request(s: Settings, m: NotificationMessage): HttpSend {
    return {
      url: urlPath(s.serverUrl, '/'),
      headers: s.accessToken ? { authorization: `Bearer ${s.accessToken}` } : {},
      json: {
        topic: s.topic,
        title: m.title,
        message: m.fields.map(f => `${f.name}: ${f.value}`).join('\n') || m.title,
        priority: s.priority ?? 3,
        tags: [tags[m.level]],
        ...(m.link ? { click: m.link } : {}),
      },
    };
  }
}
