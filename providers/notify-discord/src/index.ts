// @berth/provider-notify-discord: messages to a Discord channel through its webhook.
import { defineProvider, Type } from '@berth/core';
import { DiscordChannel } from './discord-channel.ts';

export default defineProvider({ contract: 'notify', id: 'discord', options: Type.Object({}, { additionalProperties: false }), create: () => new DiscordChannel() });
export { DiscordChannel };
