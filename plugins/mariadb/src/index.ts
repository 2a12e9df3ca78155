import { databasePlugin } from '@berth/core';
import { MariadbDriver } from '@berth/provider-database-mariadb';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new MariadbDriver(), { version: pkg.version });
