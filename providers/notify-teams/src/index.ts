// @berth/provider-notify-teams: messages to a Microsoft Teams channel through a workflow webhook.
import { defineProvider, Type } from '@berth/core';
import { TeamsChannel } from './teams-channel.ts';

export default defineProvider({ contract: 'notify', id: 'teams', options: Type.Object({}, { additionalProperties: false }), create: () => new TeamsChannel() });
export { TeamsChannel };
