// Teams' workflow webhooks ("Post to a channel when a webhook request is received") take a
// message with one Adaptive Card attachment; the URL carries its signature (`sig=`), a secret.
// Teams answers 202 Accepted (200 for the older connectors), 4xx when the flow refuses it.
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { LIMIT, markedTitle, WebhookUrlChannel } from '@berth/provider-notify-kit';

const Settings = Type.Object({ webhookUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: "The workflow's webhook URL" }) });
type Settings = Static<typeof Settings>;
const colour: Record<NotificationMessage['level'], string> = { success: 'Good', error: 'Attention', warning: 'Warning', info: 'Accent' };

export class TeamsChannel extends WebhookUrlChannel<Settings> {
  readonly id = 'teams';
  readonly label = 'Teams';
  readonly procedureSuffix = 'Teams';
  readonly settings = Settings;

  protected body(s: Settings, m: NotificationMessage) {
    return {
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          contentUrl: null,
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.4',
            body: [
              { type: 'TextBlock', text: markedTitle(m), weight: 'Bolder', size: 'Medium', color: colour[m.level], wrap: true },
              { type: 'FactSet', facts: m.fields.map(f => ({ title: f.name, value: f.value })) },
            ],
            ...(m.link ? { actions: [{ type: 'Action.OpenUrl', title: 'Details', url: m.link }] } : {}),
          },
        },
      ],
    };
  }
}
