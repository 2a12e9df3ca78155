// MariaDB as a Berth database kind: MySQL's protocol and SQL, with MariaDB's names. The public
// mariadb image reads MARIADB_* (newer) and MYSQL_* (older) variables, so both are set; its 11.x
// images no longer ship the mysql-named programs, so the mariadb-named ones (10.4 and later) run.
import { quoteString, MysqlDriver } from '@berth/provider-database-mysql';

export class MariadbDriver extends MysqlDriver {
  override readonly kind: string = 'mariadb';
  override readonly label: string = 'MariaDB';
  override readonly backupProcedureSuffix: string = 'Mariadb';
  override readonly defaultImage = { current: 'mariadb:6', older: 'mariadb:6' };
  protected override readonly client: string = 'mariadb';
  protected override readonly dumpProgram: string = 'mariadb-dump';
  protected override readonly envPrefixes: string[] = ['MARIADB', 'MYSQL'];

  /** MariaDB's ALTER USER needs the CREATE USER privilege even for oneself; SET PASSWORD does not. */
  protected override ownPasswordSql(newPassword: string): string {
    return `SET PASSWORD = PASSWORD(${quoteString(newPassword)})`;
  }
}
