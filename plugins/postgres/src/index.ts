import { PostgresDriver } from '@berth/provider-database-postgres';
import { databasePlugin } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new PostgresDriver(), { version: pkg.version });
