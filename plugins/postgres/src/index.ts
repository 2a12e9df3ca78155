import { databasePlugin } from '@berth/core';
import { PostgresDriver } from '@berth/provider-database-postgres';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new PostgresDriver(), { version: pkg.version });
