// The Bot API's sendMessage, as HTML: the bot token is in the request path (a secret that the
// plugin redacts from every answer it quotes). Telegram answers `{"ok": true, …}`, or a 4xx with
// `{"ok": false, "description": …}` (401 for a wrong token, 400 for a wrong chat).
import { Type, type NotificationMessage, type Static } from '@berth/core';
import { ApiUrlChannel, htmlText as html, jsonAnswer, LIMIT, markedTitle, type HttpSend } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  botToken: Type.String({ minLength: 1, maxLength: LIMIT.secret, description: "The bot's token from @BotFather" }),
  chatId: Type.String({ minLength: 1, maxLength: LIMIT.name, description: 'The chat (or channel) to post to' }),
  messageThreadId: Type.Optional(Type.String({ maxLength: LIMIT.name, description: 'The topic of a forum chat; empty for none' })),
});
type Settings = Static<typeof Settings>;

/** Telegram's limit on a message's text. */
const TEXT_MAX = 4096;

export class TelegramChannel extends ApiUrlChannel<Settings> {
  readonly id = 'telegram';
  readonly label = 'Telegram';
  readonly procedureSuffix = 'Telegram';
  readonly settings = Settings;
  readonly secretFields = ['botToken'] as const;
  /** Telegram says `"ok": false` in the body when it refuses (its status already says so, but not always for proxies). */
  protected readonly accept = jsonAnswer(answer => answer.ok === true);

  protected request(s: Settings, m: NotificationMessage): HttpSend {
    const text = [`<b>${html(markedTitle(m))}</b>`, ...m.fields.map(f => `<b>${html(f.name)}:</b> ${html(f.value)}`), ...(m.link ? [`<a href="${html(m.link)}">Details</a>`] : [])]
      .join('\n')
      .slice(0, TEXT_MAX);
    const thread = s.messageThreadId ? Number(s.messageThreadId) : undefined;
    return {
      url: `${this.apiUrl}/bot${encodeURIComponent(s.botToken)}/sendMessage`,
      json: { chat_id: s.chatId, text, parse_mode: 'HTML', link_preview_options: { is_disabled: true }, ...(thread ? { message_thread_id: thread } : {}) },
    };
  }
}
