// MySQL as a Berth database kind: the public mysql image's environment, and its own clients
// (mysql, mysqldump) run inside the container over TCP to 127.0.0.1 with the password in
// MYSQL_PWD, never in an argument. TCP on purpose: the image's first-start server listens on its
// socket only, so a check over TCP cannot pass before the real server is up.
// MariadbDriver (@berth/provider-database-mariadb) extends this class: same protocol, other names.
import { Type, type ContainerCommand, type DatabaseCredentials, type DatabaseDriver } from '@berth/core';

/** The peer's current-variant password rule for mysql, mariadb and mongo: letters, digits and these signs, empty allowed. */
export const MYSQL_PASSWORD_PATTERN = '^[a-zA-Z0-9@#%^&*()_+\\-=[\\]{}|;:,.<>?~`]*$';

const PORT = 3306;

/** A MySQL string literal: backslash and quote escaped (the default sql_mode reads backslash escapes), NUL as \0. */
export function quoteString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''").replaceAll('\0', '\\0')}'`;
}

/** A MySQL identifier in backquotes, backquotes doubled. */
export function quoteIdentifier(name: string): string {
  if (name.includes('\0')) throw new Error('A MySQL name cannot contain a NUL character');
  return `\`${name.replaceAll('`', '``')}\``;
}

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export class MysqlDriver implements DatabaseDriver {
  readonly kind: string = 'mysql';
  readonly label: string = 'MySQL';
  readonly backupProcedureSuffix: string = 'MySql';
  readonly defaultImage: { current: string; older: string } = { current: 'mysql:8', older: 'mysql:8' };
  readonly fields = { databaseName: true, databaseUser: true, databaseRootPassword: true };
  readonly passwordSchema = Type.String({ pattern: MYSQL_PASSWORD_PATTERN });
  readonly olderPasswordSchema = Type.String();
  readonly dataPath = '/var/lib/mysql';
  readonly internalPort = PORT;
  /** The image's command-line client and dump program. */
  protected readonly client: string = 'mysql';
  protected readonly dumpProgram: string = 'mysqldump';
  /** The image's environment-variable prefixes, in the order they are written. */
  protected readonly envPrefixes: string[] = ['MYSQL'];

  protected user(c: DatabaseCredentials): string {
    return c.databaseUser ?? 'mysql';
  }

  protected database(c: DatabaseCredentials): string {
    return c.databaseName ?? this.user(c);
  }

  /** The client's connection arguments for one account over loopback TCP. */
  protected connect(user: string): string[] {
    return ['--protocol=TCP', '--host=127.0.0.1', `--port=${PORT}`, `--user=${user}`];
  }

  /** SQL that sets the connected account's own password, for when the root password is unknown. */
  protected ownPasswordSql(newPassword: string): string {
    return `ALTER USER USER() IDENTIFIED BY ${quoteString(newPassword)}`;
  }

  containerEnv(c: DatabaseCredentials): Record<string, string> {
    const env: Record<string, string> = {};
    for (const prefix of this.envPrefixes) {
      // Without a root password the image picks a random one rather than leaving root open.
      if (c.databaseRootPassword) env[`${prefix}_ROOT_PASSWORD`] = c.databaseRootPassword;
      else env[`${prefix}_RANDOM_ROOT_PASSWORD`] = 'yes';
      env[`${prefix}_DATABASE`] = this.database(c);
      env[`${prefix}_USER`] = this.user(c);
      env[`${prefix}_PASSWORD`] = c.databasePassword;
    }
    return env;
  }

  startCommand(): { command: string | null; args: string[] | null } {
    return { command: null, args: null };
  }

  readinessCheck(c: DatabaseCredentials): ContainerCommand {
    return { cmd: [this.client, ...this.connect(this.user(c)), `--database=${this.database(c)}`, '--batch', '--skip-column-names', '--execute=SELECT 1'], env: { MYSQL_PWD: c.databasePassword } };
  }

  connectionUrl(c: DatabaseCredentials, host: string, port: number): string {
    const user = encodeURIComponent(this.user(c));
    const password = encodeURIComponent(c.databasePassword);
    return `mysql://${user}:${password}@${urlHost(host)}:${port}/${encodeURIComponent(this.database(c))}`;
  }

  changePasswordCommand(c: DatabaseCredentials, newPassword: string, account: 'user' | 'root' = 'user'): ContainerCommand {
    const literal = quoteString(newPassword);
    if (account === 'root') {
      if (!c.databaseRootPassword) throw new Error(`The ${this.label} root password is not known, so it cannot be changed`);
      // The images create root for '%' and for localhost; either may be missing in an image of one's own.
      const sql = `ALTER USER IF EXISTS 'root'@'%' IDENTIFIED BY ${literal}; ALTER USER IF EXISTS 'root'@'localhost' IDENTIFIED BY ${literal}; FLUSH PRIVILEGES;`;
      return { cmd: [this.client, ...this.connect('root'), '--batch', `--execute=${sql}`], env: { MYSQL_PWD: c.databaseRootPassword } };
    }
    if (!c.databaseRootPassword) {
      return { cmd: [this.client, ...this.connect(this.user(c)), '--batch', `--execute=${this.ownPasswordSql(newPassword)}`], env: { MYSQL_PWD: c.databasePassword } };
    }
    // The images create the user for host '%'.
    const sql = `ALTER USER ${quoteString(this.user(c))}@'%' IDENTIFIED BY ${literal}; FLUSH PRIVILEGES;`;
    return { cmd: [this.client, ...this.connect('root'), '--batch', `--execute=${sql}`], env: { MYSQL_PWD: c.databaseRootPassword } };
  }

  dumpCommand(c: DatabaseCredentials): ContainerCommand {
    // --no-tablespaces: dumping tablespaces needs the PROCESS privilege, which the user lacks.
    // "--" so a database name is never read as an option.
    return {
      cmd: [this.dumpProgram, ...this.connect(this.user(c)), '--single-transaction', '--routines', '--triggers', '--no-tablespaces', '--', this.database(c)],
      env: { MYSQL_PWD: c.databasePassword },
    };
  }

  /**
   * Every base table of the database with its exact row count, one "name<TAB>count" line each:
   * one UNION ALL of COUNT(*) per table, built from information_schema and run as a prepared
   * statement (top-level PREPARE works in MySQL and MariaDB alike). No table gives a query with
   * no rows, since PREPARE of NULL fails.
   */
  inventoryCommand(c: DatabaseCredentials): ContainerCommand {
    const count = "CONCAT('SELECT ', QUOTE(table_name), ', COUNT(*) FROM `', REPLACE(table_name, '`', '``'), '`')";
    const sql = [
      'SET SESSION group_concat_max_len = 16777216',
      `SET @berth_inventory = (SELECT COALESCE(GROUP_CONCAT(${count} ORDER BY table_name SEPARATOR ' UNION ALL '), 'SELECT 1 FROM DUAL WHERE FALSE') FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE')`,
      'PREPARE berth_inventory FROM @berth_inventory',
      'EXECUTE berth_inventory',
      'DEALLOCATE PREPARE berth_inventory',
    ].join('; ');
    return { cmd: [this.client, ...this.connect(this.user(c)), `--database=${this.database(c)}`, '--batch', '--skip-column-names', `--execute=${sql}`], env: { MYSQL_PWD: c.databasePassword } };
  }

  createDatabaseCommand(c: DatabaseCredentials): ContainerCommand {
    const name = quoteIdentifier(this.database(c));
    // The images' user has rights on its own database only: root creates the new one and grants it.
    if (c.databaseRootPassword) {
      const sql = `CREATE DATABASE IF NOT EXISTS ${name}; GRANT ALL PRIVILEGES ON ${name}.* TO ${quoteString(this.user(c))}@'%'; FLUSH PRIVILEGES;`;
      return { cmd: [this.client, ...this.connect('root'), '--batch', `--execute=${sql}`], env: { MYSQL_PWD: c.databaseRootPassword } };
    }
    return { cmd: [this.client, ...this.connect(this.user(c)), '--batch', `--execute=CREATE DATABASE IF NOT EXISTS ${name}`], env: { MYSQL_PWD: c.databasePassword } };
  }

  credentialsFromEnv(env: Record<string, string>): DatabaseCredentials {
    const read = (suffix: string) => this.envPrefixes.map(p => env[`${p}_${suffix}`]).find(v => v !== undefined && v !== '') ?? null;
    const databaseRootPassword = read('ROOT_PASSWORD');
    const databaseUser = read('USER') ?? (databaseRootPassword ? 'root' : null);
    const databasePassword = read('USER') ? (read('PASSWORD') ?? '') : (databaseRootPassword ?? '');
    return { databaseUser, databasePassword, databaseName: read('DATABASE'), databaseRootPassword };
  }

  restoreCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: [this.client, ...this.connect(this.user(c)), `--database=${this.database(c)}`, '--batch'], env: { MYSQL_PWD: c.databasePassword } };
  }
}
