// An AI configuration of one organization: the service's URL, its key (sealed), the model.
import { columns, defineEntity, p } from '@berth/core';

export const Ai = defineEntity({
  name: 'Ai',
  tableName: 'ai',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    aiId: columns.primaryId(),
    name: p.string(),
    /** The service's base URL, without a trailing slash; it chooses the provider. */
    apiUrl: p.text(),
    /** The API key as SecretBox.encrypt sealed it (`v1:…`); never answered. */
    apiKey: p.text(),
    model: p.string(),
    isEnabled: p.boolean().default(true),
    organizationId: columns.berthId(),
    createdAt: columns.createdAt(),
  },
});

export type AiRow = InstanceType<typeof Ai.class>;
export const aiEntities = [Ai];
