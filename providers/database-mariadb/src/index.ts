// @berth/provider-database-mariadb: the mariadb kind's driver.
// The driver class is exported for extension: a compatible kind is a subclass with its own kind and label.
import { defineProvider, Type } from '@berth/core';
import { MariadbDriver } from './mariadb-driver.ts';

export default defineProvider({ contract: 'database', id: 'mariadb', options: Type.Object({}, { additionalProperties: false }), create: () => new MariadbDriver() });
export { MariadbDriver } from './mariadb-driver.ts';
