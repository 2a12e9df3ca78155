// @berth/provider-database-postgres: the postgres kind's driver.
// The driver class is exported for extension: a compatible kind is a subclass with its own kind and label.
import { defineProvider, Type } from '@berth/core';
import { PostgresDriver } from './postgres-driver.ts';

export default defineProvider({ contract: 'database', id: 'postgres', options: Type.Object({}, { additionalProperties: false }), create: () => new PostgresDriver() });
export { PostgresDriver, POSTGRES_PASSWORD_PATTERN, quoteIdent, quoteLiteral } from './postgres-driver.ts';
