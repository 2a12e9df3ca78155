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

/** An AI service the organization allows (ai.saveCustomProviders): once one is listed, ai.create and ai.update take only listed URLs. */
export const AiCustomProvider = defineEntity({
  name: 'AiCustomProvider',
  tableName: 'ai_custom_providers',
  properties: {
    organizationId: columns.berthId().primary(),
    /** Its place in the list the organization saved, from 0. */
    position: p.integer().primary(),
    name: p.string(),
    /** Trimmed, without a trailing slash, as an AI configuration's apiUrl is compared. */
    apiUrl: p.text(),
  },
});

export const aiEntities = [Ai, AiCustomProvider];
