import { MariadbDriver } from '@berth/provider-database-mariadb';
import { databasePlugin } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new MariadbDriver(), { version: pkg.version });
