// @berth/provider-notify-slack: messages to a Slack channel through an incoming webhook.
import { defineProvider, Type } from '@berth/core';
import { SlackChannel } from './slack-channel.ts';

export default defineProvider({ contract: 'notify', id: 'slack', options: Type.Object({}, { additionalProperties: false }), create: () => new SlackChannel() });
export { SlackChannel };
