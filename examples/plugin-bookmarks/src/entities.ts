import { defineEntity, p, newId } from '@berth/core';

export const Bookmark = defineEntity({
  name: 'Bookmark',
  tableName: 'ext_bookmarks',
  properties: {
    bookmarkId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    organizationId: p.string().length(32).index(),
    projectId: p.string().length(32).nullable(),
    url: p.text(),
    title: p.string(),
    weight: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
