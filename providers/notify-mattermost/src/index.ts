// @berth/provider-notify-mattermost: messages to a Mattermost channel through an incoming webhook.
import { defineProvider, Type } from '@berth/core';
import { MattermostChannel } from './mattermost-channel.ts';

export default defineProvider({ contract: 'notify', id: 'mattermost', options: Type.Object({}, { additionalProperties: false }), create: () => new MattermostChannel() });
export { MattermostChannel };
