// @berth/provider-notify-email: messages by email through the user's SMTP server (nodemailer,
// loaded on the first send). `caFile` adds trusted CAs for a mail server with a private CA.
import { defineProvider, Type } from '@berth/core';
import { EmailChannel } from './email-channel.ts';

export default defineProvider({
  contract: 'notify',
  id: 'email',
  options: Type.Object(
    { caFile: Type.String({ default: '', description: "A PEM file of CA certificates trusted besides the system's (a mail server with a private CA); empty = none" }) },
    { additionalProperties: false },
  ),
  create: options => new EmailChannel({ caFile: options.caFile }),
});
export { EmailChannel };
