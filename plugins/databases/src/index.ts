// Every enabled database driver provider becomes a workload kind with its `<kind>.*`
// namespace: enabling a provider (`providers.database.<kind>` in the config) is all a kind needs.
import { definePlugin } from '@berth/core';
import { bindDatabaseKind } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };

export default definePlugin({
  name: 'databases',
  version: pkg.version,
  // Databases are workloads: they live in environments and run through the deploy queue.
  dependencies: ['workloads', 'environment', 'deployment'],
  setup(berth) {
    for (const driver of berth.container.cradle.providers.all('database')) bindDatabaseKind(berth, driver);
  },
});
