import { databasePlugin } from '@berth/core';
import { RedisDriver } from '@berth/provider-database-redis';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new RedisDriver(), { version: pkg.version });
