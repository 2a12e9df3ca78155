// A Lark custom bot's webhook takes an interactive card (`msg_type: interactive`). Lark answers
// HTTP 200 even when it refuses (a wrong keyword, a revoked bot): the body's `code` says, 0 being
// success, so the answer is read, not trusted.
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { jsonAnswer, LIMIT, markedTitle, WebhookUrlChannel } from '@berth/provider-notify-kit';

const Settings = Type.Object({ webhookUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: "The custom bot's webhook URL (https://open.larksuite.com/open-apis/bot/v2/hook/…)" }) });
type Settings = Static<typeof Settings>;
const template: Record<NotificationMessage['level'], string> = { success: 'green', error: 'red', warning: 'orange', info: 'blue' };

export class LarkChannel extends WebhookUrlChannel<Settings> {
  readonly id = 'lark';
  readonly label = 'Lark';
  readonly procedureSuffix = 'Lark';
  readonly settings = Settings;
  protected readonly accept = jsonAnswer(answer => (answer.code ?? answer.StatusCode ?? 0) === 0);

  protected body(s: Settings, m: NotificationMessage) {
    return {
      msg_type: 'interactive',
      card: {
        header: { template: template[m.level], title: { tag: 'plain_text', content: markedTitle(m) } },
        elements: [
          ...m.fields.map(f => ({ tag: 'div', text: { tag: 'lark_md', content: `**${f.name}:** ${f.value}` } })),
          ...(m.link ? [{ tag: 'action', actions: [{ tag: 'button', text: { tag: 'plain_text', content: 'Details' }, url: m.link, type: 'default' }] }] : []),
        ],
      },
    };
  }
}
