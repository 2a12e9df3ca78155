import { MysqlDriver } from '@berth/provider-database-mysql';
import { databasePlugin } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new MysqlDriver(), { version: pkg.version });
