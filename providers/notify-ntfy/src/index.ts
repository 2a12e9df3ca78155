// @berth/provider-notify-ntfy: messages to an ntfy topic on the record's server (serverUrl).
import { defineProvider, Type } from '@berth/core';
import { NtfyChannel } from './ntfy-channel.ts';

export default defineProvider({ contract: 'notify', id: 'ntfy', options: Type.Object({}, { additionalProperties: false }), create: () => new NtfyChannel() });
export { NtfyChannel };
