import { RedisDriver } from '@berth/provider-database-redis';
import { databasePlugin } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new RedisDriver(), { version: pkg.version });
