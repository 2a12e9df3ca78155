// The platform plugin: settings.* about Berth itself — its version, whether a newer release
// exists (the operator's release feed, releaseFeedUrl), updateServer's refusal with the
// upgrade steps, and what a self-hosted instance answers about itself (health, isCloud, ...). The issue placed these in the kernel; they live here because core/src keeps to
// its size budget.
import { definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { platformProcedures } from './procedures.ts';
import { selfHostedProcedures } from './self-hosted.ts';
import { ReleaseCheck } from './service.ts';

export { ReleaseCheck, berthVersion, compareReleases, feedVersions, releaseOf } from './service.ts';
export { UPGRADE_STEPS } from './procedures.ts';
export { NO_REDIS } from './self-hosted.ts';

export default definePlugin({
  name: 'platform',
  uses: ['server', 'project'], // used when enabled (optionalService): settings.isUserSubscribed counts the organization's servers and projects
  version: pkg.version,
  config,
  setup(berth) {
    const releases = new ReleaseCheck({ feedUrl: () => berth.config.releaseFeedUrl, logger: berth.container.cradle.logger });
    berth.procedures(...platformProcedures(releases), ...selfHostedProcedures(releases.version));
  },
});
