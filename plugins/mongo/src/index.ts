import { databasePlugin } from '@berth/core';
import { MongoDriver } from '@berth/provider-database-mongo';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new MongoDriver(), { version: pkg.version });
