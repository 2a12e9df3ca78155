// @berth/provider-database-libsql: the libsql kind's driver (sqld, the peer's libsql router).
// The driver class is exported for extension: a compatible kind is a subclass with its own kind and label.
import { defineProvider, Type } from '@berth/core';
import { LibsqlDriver } from './libsql-driver.ts';

export default defineProvider({ contract: 'database', id: 'libsql', options: Type.Object({}, { additionalProperties: false }), create: () => new LibsqlDriver() });
export { LibsqlDriver } from './libsql-driver.ts';
