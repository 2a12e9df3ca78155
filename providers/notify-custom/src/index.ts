// @berth/provider-notify-custom: every message as signed JSON to an endpoint of the user's.
import { defineProvider, Type } from '@berth/core';
import { CustomWebhookChannel } from './custom-channel.ts';

export default defineProvider({ contract: 'notify', id: 'custom', options: Type.Object({}, { additionalProperties: false }), create: () => new CustomWebhookChannel() });
export { CustomWebhookChannel, signWebhook } from './custom-channel.ts';
