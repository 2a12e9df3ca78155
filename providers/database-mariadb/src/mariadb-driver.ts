// MariaDB as a Berth database kind: MySQL's protocol and SQL, with MariaDB's names. The public
// mariadb image reads MARIADB_* (newer) and MYSQL_* (older) variables, so both are set; its 11.x
// images no longer ship the mysql-named programs, so the mariadb-named ones (10.4 and later) run.
import type { ContainerCommand, DatabaseCredentials } from '@berth/core';
import { quoteString, MysqlDriver } from '@berth/provider-database-mysql';

export class MariadbDriver extends MysqlDriver {
  override readonly kind: string = 'mariadb';
  override readonly label: string = 'MariaDB';
  override readonly backupProcedureSuffix: string = 'Mariadb';
  override readonly defaultImage = { current: 'mariadb:6', older: 'mariadb:6' };
  protected override readonly client: string = 'mariadb';
  protected override readonly dumpProgram: string = 'mariadb-dump';
  protected override readonly envPrefixes: string[] = ['MARIADB', 'MYSQL'];

  /**
   * Every table of the database with its exact row count: an anonymous block (MariaDB 10.1+) runs
   * one COUNT(*) per table through EXECUTE IMMEDIATE (10.2+), one "name<TAB>count" line each; the
   * client delimiter is // so the block reaches the server whole.
   */
  inventoryCommand(c: DatabaseCredentials): ContainerCommand {
    const sql = `BEGIN NOT ATOMIC
      DECLARE done INT DEFAULT 0;
      DECLARE t VARCHAR(256);
      DECLARE tables CURSOR FOR SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY table_name;
      DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1;
      OPEN tables;
      counting: LOOP
        FETCH tables INTO t;
        IF done THEN LEAVE counting; END IF;
        EXECUTE IMMEDIATE CONCAT('SELECT ', QUOTE(t), ', COUNT(*) FROM \`', REPLACE(t, '\`', '\`\`'), '\`');
      END LOOP;
      CLOSE tables;
    END`;
    return { cmd: [this.client, ...this.connect(this.user(c)), `--database=${this.database(c)}`, '--batch', '--skip-column-names', '--delimiter=//', `--execute=${sql}`], env: { MYSQL_PWD: c.databasePassword } };
  }

  /** MariaDB's ALTER USER needs the CREATE USER privilege even for oneself; SET PASSWORD does not. */
  protected override ownPasswordSql(newPassword: string): string {
    return `SET PASSWORD = PASSWORD(${quoteString(newPassword)})`;
  }
}
