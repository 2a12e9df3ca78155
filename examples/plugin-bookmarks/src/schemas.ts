import { Type, schema } from '@berth/core';

export const BookmarkView = Type.Object({
  bookmarkId: Type.String(),
  organizationId: Type.String(),
  projectId: schema.Nullable(Type.String()),
  url: Type.String({ format: 'uri' }),
  title: Type.String(),
  weight: Type.Integer(),
  createdAt: schema.Timestamp(),
});

export const CreateBookmark = Type.Object({
  url: Type.String({ format: 'uri' }),
  title: Type.String({ minLength: 1, maxLength: 80 }),
  weight: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
  projectId: Type.Optional(schema.Nullable(Type.String({ minLength: 1 }))),
});
