// Gotify's POST /message with the application token in X-Gotify-Key: `{title, message, priority}`,
// markdown. It answers 200 with the stored message, 401 for a wrong token. The server is the
// record's serverUrl, as the peer has it; a Gotify that is down only fails its deliveries.
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { HttpChannel, httpUrl, LIMIT, markedTitle, urlPath, type HttpSend } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  serverUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: 'The Gotify server (https://gotify.example.com)' }),
  appToken: Type.String({ minLength: 1, maxLength: LIMIT.secret, description: 'An application token' }),
  priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 5 })),
  decoration: Type.Optional(Type.Boolean({ description: 'Prefix titles with an emoji of the level' })),
});
type Settings = Static<typeof Settings>;

export class GotifyChannel extends HttpChannel<Settings> {
  readonly id = 'gotify';
  readonly label = 'Gotify';
  readonly procedureSuffix = 'Gotify';
  readonly settings = Settings;
  readonly addressFields = ['serverUrl'] as const;
  readonly secretFields = ['appToken'] as const;

  validate(s: Settings): void {
    httpUrl('serverUrl', s.serverUrl);
  }

  protected request(s: Settings, m: NotificationMessage): HttpSend {
    return {
      url: urlPath(s.serverUrl, '/message'),
      headers: { 'x-gotify-key': s.appToken },
      json: {
        title: s.decoration ? markedTitle(m) : m.title,
        message: [...m.fields.map(f => `**${f.name}:** ${f.value}`), ...(m.link ? [`[Details](${m.link})`] : [])].join('  \n'),
        priority: s.priority ?? 5,
        extras: { 'client::display': { contentType: 'text/markdown' }, ...(m.link ? { 'client::notification': { click: { url: m.link } } } : {}) },
      },
    };
  }
}
