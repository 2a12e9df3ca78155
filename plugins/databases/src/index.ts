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
    const { providers } = berth.container.cradle;
    for (const id of providers.ids('database')) {
      const driver = providers.get('database', id);
      // The id the operator enables is the namespace the API gets.
      if (driver.kind !== id) throw new Error(`Provider database.${id} makes a driver of kind "${driver.kind}": a database provider's id is its kind`);
      bindDatabaseKind(berth, driver);
    }
  },
});
