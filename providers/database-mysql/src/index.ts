// @berth/provider-database-mysql: the mysql kind's driver (and the base of mariadb's).
export { MysqlDriver, MYSQL_PASSWORD_PATTERN, quoteString } from './mysql-driver.ts';
