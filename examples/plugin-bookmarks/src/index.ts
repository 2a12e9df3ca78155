// A plugin written outside Berth: enable it with
//   BERTH_EXTRA_PLUGINS=/path/to/plugin-bookmarks   (or its package name)
import { definePlugin, asClass } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { Bookmark } from './entities.ts';
import { bookmarkMigrations } from './migrations.ts';
import { bookmarkProcedures } from './procedures.ts';
import { BookmarkService } from './service.ts';

export default definePlugin({
  name: 'bookmarks',
  version: pkg.version,
  dependencies: ['project'],
  config,
  setup(berth) {
    berth.entities(Bookmark);
    berth.migrations(...bookmarkMigrations);
    berth.provide({ bookmarkService: asClass(BookmarkService).scoped() });
    berth.procedures(...bookmarkProcedures);
  },
});
