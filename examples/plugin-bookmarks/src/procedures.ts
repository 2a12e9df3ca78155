import { Type, router } from '@berth/core';
import { BookmarkView, CreateBookmark } from './schemas.ts';

// Bookmarks are each member's own: every member may keep them (`permission: 'member'`).
const bookmark = router('bookmark', 'organization');

export const bookmarkProcedures = [
  bookmark.mutation('create', { permission: 'member', input: CreateBookmark, output: BookmarkView, handler: (input, ctx) => ctx.cradle.bookmarkService.create(input) }),
  bookmark.query('all', { permission: 'member', input: Type.Object({}), output: Type.Array(BookmarkView), handler: (_i, ctx) => ctx.cradle.bookmarkService.all() }),
  bookmark.mutation('remove', {
    permission: 'member',
    input: Type.Object({ bookmarkId: Type.String({ minLength: 1 }) }),
    output: BookmarkView,
    handler: ({ bookmarkId }, ctx) => ctx.cradle.bookmarkService.remove(bookmarkId),
  }),
];

declare module '@berth/core' {
  interface Cradle {
    bookmarkService: import('./service.ts').BookmarkService;
  }
}
