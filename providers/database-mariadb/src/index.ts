// @berth/provider-database-mariadb: the mariadb kind's driver.
export { MariadbDriver } from './mariadb-driver.ts';
