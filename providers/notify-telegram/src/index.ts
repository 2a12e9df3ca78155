// @berth/provider-notify-telegram: messages to a Telegram chat through a bot. The Bot API's
// address is an option (providers.notify.telegram.options.apiUrl), for a local Bot API server.
import { defineProvider, Type } from '@berth/core';
import { TelegramChannel } from './telegram-channel.ts';

export default defineProvider({
  contract: 'notify',
  id: 'telegram',
  options: Type.Object(
    { apiUrl: Type.String({ default: 'https://api.telegram.org', pattern: '^https?://', description: "The Bot API's address (a local Bot API server, or a test sink)" }) },
    { additionalProperties: false },
  ),
  create: options => new TelegramChannel(options.apiUrl),
});
export { TelegramChannel };
