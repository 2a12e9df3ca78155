// A Discord webhook takes embeds: a title, fields, a colour and a link. The webhook URL carries
// its token. Discord answers 204 (no body) on success and 4xx JSON (`{"message": …, "code": …}`)
// otherwise; `decoration` adds the level's emoji to the title, as the peer's option does.
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { levelColour, LIMIT, markedTitle, WebhookUrlChannel } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  webhookUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: 'The channel webhook URL (https://discord.com/api/webhooks/…)' }),
  decoration: Type.Optional(Type.Boolean({ description: 'Prefix titles with an emoji of the level' })),
});
type Settings = Static<typeof Settings>;

/** Discord's limits on an embed's parts. */
const FIELD_VALUE_MAX = 1024;

export class DiscordChannel extends WebhookUrlChannel<Settings> {
  readonly id = 'discord';
  readonly label = 'Discord';
  readonly procedureSuffix = 'Discord';
  readonly settings = Settings;

  protected body(s: Settings, m: NotificationMessage) {
    return {
      embeds: [
        {
          title: s.decoration ? markedTitle(m) : m.title,
          color: levelColour[m.level],
          fields: m.fields.map(f => ({ name: f.name, value: f.value.slice(0, FIELD_VALUE_MAX), inline: f.value.length < 40 })),
          ...(m.link ? { url: m.link } : {}),
          timestamp: m.at,
          footer: { text: 'Berth' },
        },
      ],
    };
  }
}
