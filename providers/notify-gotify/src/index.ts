// @berth/provider-notify-gotify: messages to a Gotify server named by each record (serverUrl).
import { defineProvider, Type } from '@berth/core';
import { GotifyChannel } from './gotify-channel.ts';

export default defineProvider({ contract: 'notify', id: 'gotify', options: Type.Object({}, { additionalProperties: false }), create: () => new GotifyChannel() });
export { GotifyChannel };
