// The templates each user bookmarked (the peer keeps them on its user row, bookmarkedTemplates):
// a user's own, whatever organization it acts in; they go with the account.
import { columns, defineEntity, p } from '@berth/core';

export const TemplateBookmark = defineEntity({
  name: 'TemplateBookmark',
  tableName: 'template_bookmarks',
  uniques: [{ properties: ['userId', 'templateId'] }],
  properties: { id: columns.primaryId(), userId: columns.berthId(), templateId: p.string(), createdAt: columns.createdAt() },
});

export const userEntities = [TemplateBookmark];
