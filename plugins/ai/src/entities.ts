// An AI configuration of one organization: the service's URL, its key (sealed), the model.
import { defineEntity, p, newId } from '@berth/core';

export const Ai = defineEntity({
  name: 'Ai',
  tableName: 'ai',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    aiId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    name: p.string(),
    /** The service's base URL, without a trailing slash; it chooses the provider. */
    apiUrl: p.text(),
    /** The API key as SecretBox.encrypt sealed it (`v1:…`); never answered. */
    apiKey: p.text(),
    model: p.string(),
    isEnabled: p.boolean().default(true),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type AiRow = InstanceType<typeof Ai.class>;
export const aiEntities = [Ai];
