// @berth/provider-notify-lark: messages to a Lark (Feishu) group through a custom bot.
import { defineProvider, Type } from '@berth/core';
import { LarkChannel } from './lark-channel.ts';

export default defineProvider({ contract: 'notify', id: 'lark', options: Type.Object({}, { additionalProperties: false }), create: () => new LarkChannel() });
export { LarkChannel };
