// A third party's database kind, enabled with
//   BERTH_EXTRA_PLUGINS=/path/to/database-valkey   (or extraPlugins in berth.config.json)
// The whole plugin is this line: the kit in @berth/core brings the table, every procedure and the deployer.
import pkg from '../package.json' with { type: 'json' };
import { ValkeyDriver } from './driver.ts';
import { databasePlugin } from '@berth/plugin-workloads';

export default databasePlugin(new ValkeyDriver(), { version: pkg.version });
