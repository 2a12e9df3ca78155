import { MongoDriver } from '@berth/provider-database-mongo';
import { databasePlugin } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new MongoDriver(), { version: pkg.version });
