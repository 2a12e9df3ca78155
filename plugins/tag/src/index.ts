// The tag plugin: tag.* records, offered to the project plugin as `projectTags` (each project's tags in its answers).
import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { tagEntities } from './entities.ts';
import { tagMigrations } from './migrations.ts';
import { tagProcedures } from './procedures.ts';
import { TagRequests } from './requests.ts';
import { TagService } from './service.ts';

export default definePlugin({
  name: 'tag',
  version: pkg.version,
  // A tag is on projects: their table comes first (its links refer to it), and tag.* checks a project through `projects`.
  dependencies: ['project'],
  setup(berth) {
    berth.entities(...tagEntities);
    berth.migrations(...tagMigrations);
    berth.provide({ projectTags: asValue(new TagService()), tagRequests: asClass(TagRequests).scoped() });
    berth.procedures(...tagProcedures);
  },
});
