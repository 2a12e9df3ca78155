// The plugin's configuration keys, declared as every plugin declares them: a TypeBox object whose
// keys name their environment variable with `env`. The operator sets them in the section
// "bookmarks" of berth.config.json or in the environment; Berth validates them at boot.
import { Type, type Static } from '@berth/core';

const BookmarksConfig = Type.Object({
  bookmarksPerOrganization: Type.Integer({
    env: 'BERTH_BOOKMARKS_LIMIT',
    minimum: 1,
    maximum: 100000,
    default: 500,
    description: 'Most bookmarks an organization may keep; past it bookmark.create answers 409',
  }),
});
export default BookmarksConfig;
export type BookmarksSettings = Static<typeof BookmarksConfig>;

declare module '@berth/core' {
  interface BerthConfig extends BookmarksSettings {}
}
