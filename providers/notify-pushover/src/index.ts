// @berth/provider-notify-pushover: messages to Pushover users or groups. The API's address is an
// option (providers.notify.pushover.options.apiUrl).
import { defineProvider, Type } from '@berth/core';
import { PushoverChannel } from './pushover-channel.ts';

export default defineProvider({
  contract: 'notify',
  id: 'pushover',
  options: Type.Object({ apiUrl: Type.String({ default: 'https://api.pushover.net', pattern: '^https?://', description: "Pushover's API address" }) }, { additionalProperties: false }),
  create: options => new PushoverChannel(options.apiUrl),
});
export { PushoverChannel };
