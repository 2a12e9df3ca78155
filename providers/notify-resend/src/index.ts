// @berth/provider-notify-resend: email through Resend's HTTP API. The API's address is an option
// (providers.notify.resend.options.apiUrl), so tests and proxies can stand in for it.
import { defineProvider, Type } from '@berth/core';
import { ResendChannel } from './resend-channel.ts';

export default defineProvider({
  contract: 'notify',
  id: 'resend',
  options: Type.Object({ apiUrl: Type.String({ default: 'https://api.resend.com', pattern: '^https?://', description: "Resend's API address" }) }, { additionalProperties: false }),
  create: options => new ResendChannel(options.apiUrl),
});
export { ResendChannel };
