// @berth/provider-database-mysql: the mysql kind's driver (and the base of mariadb's).
// The driver class is exported for extension: a compatible kind is a subclass with its own kind and label.
import { defineProvider, Type } from '@berth/core';
import { MysqlDriver } from './mysql-driver.ts';

export default defineProvider({ contract: 'database', id: 'mysql', options: Type.Object({}, { additionalProperties: false }), create: () => new MysqlDriver() });
export { MysqlDriver, MYSQL_PASSWORD_PATTERN, quoteString } from './mysql-driver.ts';
