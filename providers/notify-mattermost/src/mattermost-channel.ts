// Mattermost's incoming webhooks take Slack-compatible payloads: `text`, `channel`, `username`
// and attachments with fields. The webhook URL carries its key. Mattermost answers 200 `ok`,
// 400/403 with a JSON error otherwise.
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { levelMark, LIMIT, slackAttachment, WebhookUrlChannel } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  webhookUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: 'The incoming webhook URL (https://mattermost.example.com/hooks/…)' }),
  channel: Type.Optional(Type.String({ maxLength: LIMIT.name, description: "The channel to post to, when not the webhook's own" })),
  username: Type.Optional(Type.String({ maxLength: LIMIT.name, description: 'The name the posts show' })),
});
type Settings = Static<typeof Settings>;

export class MattermostChannel extends WebhookUrlChannel<Settings> {
  readonly id = 'mattermost';
  readonly label = 'Mattermost';
  readonly procedureSuffix = 'Mattermost';
  readonly settings = Settings;

  protected body(s: Settings, m: NotificationMessage) {
    return {
      ...(s.channel ? { channel: s.channel } : {}),
      ...(s.username ? { username: s.username } : {}),
      text: `${levelMark[m.level]} **${m.title}**`,
      attachments: [{ ...slackAttachment(m), ...(m.link ? { title: 'Details', title_link: m.link } : {}) }],
    };
  }
}
