import { databasePlugin } from '@berth/core';
import { MysqlDriver } from '@berth/provider-database-mysql';
import pkg from '../package.json' with { type: 'json' };

export default databasePlugin(new MysqlDriver(), { version: pkg.version });
