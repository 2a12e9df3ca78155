// A Lark custom bot's webhook takes an interactive card (`msg_type: interactive`). Lark answers
// HTTP 200 even when it refuses (a wrong keyword, a revoked bot): the body's `code` says, 0 being
// success, so the answer is read, not trusted.
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { levelMark, LIMIT, WebhookUrlChannel } from '@berth/provider-notify-kit';

const Settings = Type.Object({ webhookUrl: Type.String({ minLength: 1, maxLength: LIMIT.url, description: "The custom bot's webhook URL (https://open.larksuite.com/open-apis/bot/v2/hook/…)" }) });
type Settings = Static<typeof Settings>;
const template: Record<NotificationMessage['level'], string> = { success: 'green', error: 'red', warning: 'orange', info: 'blue' };

function accepted(body: string): boolean {
  try {
    const answer = JSON.parse(body) as { code?: number; StatusCode?: number };
    return (answer.code ?? answer.StatusCode ?? 0) === 0;
  } catch {
    return false;
  }
}

export class LarkChannel extends WebhookUrlChannel<Settings> {
  readonly id = 'lark';
  readonly label = 'Lark';
  readonly procedureSuffix = 'Lark';
  readonly settings = Settings;

  protected body(s: Settings, m: NotificationMessage) {
    return {
      msg_type: 'interactive',
      card: {
        header: { template: template[m.level], title: { tag: 'plain_text', content: `${levelMark[m.level]} ${m.title}` } },
        elements: [
          ...m.fields.map(f => ({ tag: 'div', text: { tag: 'lark_md', content: `**${f.name}:** ${f.value}` } })),
          ...(m.link ? [{ tag: 'action', actions: [{ tag: 'button', text: { tag: 'plain_text', content: 'Details' }, url: m.link, type: 'default' }] }] : []),
        ],
      },
    };
  }

  protected override accept(body: string): boolean {
    return accepted(body);
  }
}
