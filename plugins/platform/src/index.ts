// The platform plugin: settings.* about Berth itself — its version, whether a newer release
// exists (the operator's release feed, releaseFeedUrl), and updateServer's refusal with the
// upgrade steps. The issue placed these in the kernel; they live here because core/src keeps to
// its size budget.
import { definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { platformProcedures } from './procedures.ts';
import { ReleaseCheck } from './service.ts';

export { ReleaseCheck, berthVersion, compareReleases, feedVersions, releaseOf } from './service.ts';
export { UPGRADE_STEPS } from './procedures.ts';

export default definePlugin({
  name: 'platform',
  version: pkg.version,
  config,
  setup(berth) {
    const releases = new ReleaseCheck({ feedUrl: () => berth.config.releaseFeedUrl, logger: berth.container.cradle.logger });
    berth.procedures(...platformProcedures(releases));
  },
});
