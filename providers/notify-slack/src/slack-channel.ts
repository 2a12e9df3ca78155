// Slack's incoming webhooks take `text` (the fallback shown in notifications) and attachments;
// the webhook URL carries the token, so it is a secret. Slack answers 200 `ok`, or 4xx with a
// short reason (`invalid_token`, `no_service`, `channel_not_found`).
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { LIMIT, markedTitle, slackAttachment, WebhookUrlChannel } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  webhookUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: 'The incoming webhook URL (https://hooks.slack.com/services/…)' }),
  channel: Type.Optional(Type.String({ maxLength: LIMIT.name, description: 'The channel to post to, when the webhook allows another than its own' })),
});
type Settings = Static<typeof Settings>;

export class SlackChannel extends WebhookUrlChannel<Settings> {
  readonly id = 'slack';
  readonly label = 'Slack';
  readonly procedureSuffix = 'Slack';
  readonly settings = Settings;

  protected body(s: Settings, m: NotificationMessage) {
    return {
      ...(s.channel ? { channel: s.channel } : {}),
      text: markedTitle(m),
      attachments: [{ ...slackAttachment(m), ...(m.link ? { actions: [{ type: 'button', text: 'Details', url: m.link }] } : {}), ts: Math.floor(Date.parse(m.at) / 1000) }],
    };
  }
}
