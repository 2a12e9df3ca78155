// @berth/provider-database-postgres: the postgres kind's driver.
export { PostgresDriver, POSTGRES_PASSWORD_PATTERN, quoteIdent, quoteLiteral } from './postgres-driver.ts';
