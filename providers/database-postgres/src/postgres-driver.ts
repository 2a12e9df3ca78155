// PostgreSQL as a Berth database kind: the public postgres image's environment, and its own
// clients (psql, pg_dump, pg_restore) run inside the container with every credential in their
// environment (libpq's PGUSER, PGPASSWORD...), so no password reaches an argument list except
// the new one in ALTER ROLE, quoted as a SQL literal.
import { Type, type ContainerCommand, type DatabaseCredentials, type DatabaseDriver } from '@berth/core';

/** The peer's current-variant password rule: letters, digits and these signs, empty allowed. */
export const POSTGRES_PASSWORD_PATTERN = '^[a-zA-Z0-9@#%^&*()_+\\-=[\\]{}|;:,.<>?~`]*$';

/**
 * The data volume goes where postgres 18's image wants its one mount, and PGDATA is a directory
 * inside it, set explicitly for every version, so one layout works whatever the image:
 * - up to 17 the image declares VOLUME /var/lib/postgresql/data; PGDATA beside it (not in it)
 *   keeps the data out of that anonymous volume and in the named one;
 * - 18 keeps PGDATA in /var/lib/postgresql/18/docker and makes .../data a symbolic link to its
 *   parent, which some engines refuse to mount onto; an explicit PGDATA also skips its check for
 *   data left in the old place.
 */
const DATA_PATH = '/var/lib/postgresql';
const PGDATA = '/var/lib/postgresql/pgdata';
const PORT = 5432;

// Loopback is trusted by the public image's pg_hba.conf, so a check over 127.0.0.1 would pass with
// any password. This connects through the container's own name (its network address, where the
// password is required). A fixed script: the values come from the environment, never from its text.
const READY_SCRIPT = 'read -r PGHOST < /etc/hostname && export PGHOST && exec psql --no-psqlrc --no-password --quiet --tuples-only --set=ON_ERROR_STOP=1 --command="SELECT 1"';

// Creates the database unless it exists: two statements of the driver's own (names quoted) read
// from the environment; CREATE DATABASE cannot run inside a DO block. Connects to the maintenance
// database, since the target does not exist yet.
const CREATE_SCRIPT =
  'psql --no-psqlrc --no-password --host=127.0.0.1 --dbname=postgres --tuples-only --no-align --set=ON_ERROR_STOP=1 --command="$BERTH_EXISTS_SQL" | grep -qx 1 ' +
  '|| exec psql --no-psqlrc --no-password --quiet --host=127.0.0.1 --dbname=postgres --set=ON_ERROR_STOP=1 --command="$BERTH_CREATE_SQL"';

/** A SQL identifier, double-quoted with its quotes doubled. */
export function quoteIdent(name: string): string {
  if (name.includes('\0')) throw new Error('A PostgreSQL name cannot contain a NUL character');
  return `"${name.replaceAll('"', '""')}"`;
}

/** A SQL string literal (quote_literal's rule): quotes doubled; with a backslash, an E'' literal with backslashes doubled. */
export function quoteLiteral(value: string): string {
  if (value.includes('\0')) throw new Error('A PostgreSQL string cannot contain a NUL character');
  const quoted = value.replaceAll("'", "''");
  return value.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/** A libpq connection-string value ('...' with \ and ' escaped), so a database name is never read as a connection string. */
function conninfoValue(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export class PostgresDriver implements DatabaseDriver {
  readonly kind: string = 'postgres';
  readonly label: string = 'PostgreSQL';
  readonly defaultImage = { current: 'postgres:18', older: 'postgres:15' };
  readonly fields = { databaseName: true, databaseUser: true, databaseRootPassword: false };
  readonly passwordSchema = Type.String({ pattern: POSTGRES_PASSWORD_PATTERN });
  readonly olderPasswordSchema = Type.String();
  readonly dataPath = DATA_PATH;
  readonly internalPort = PORT;

  #user(c: DatabaseCredentials): string {
    return c.databaseUser ?? 'postgres';
  }

  #database(c: DatabaseCredentials): string {
    return c.databaseName ?? this.#user(c);
  }

  /** libpq's environment for one connection as the database user. */
  #clientEnv(c: DatabaseCredentials): Record<string, string> {
    return { PGUSER: this.#user(c), PGDATABASE: this.#database(c), PGPASSWORD: c.databasePassword, PGPORT: String(PORT), PGCONNECT_TIMEOUT: '5' };
  }

  containerEnv(c: DatabaseCredentials): Record<string, string> {
    const env: Record<string, string> = { POSTGRES_USER: this.#user(c), POSTGRES_PASSWORD: c.databasePassword, POSTGRES_DB: this.#database(c), PGDATA };
    // The spec allows an empty password; the image refuses to initialise without one unless
    // told that connections need none, which is what an empty password asks for.
    if (c.databasePassword === '') env.POSTGRES_HOST_AUTH_METHOD = 'trust';
    return env;
  }

  startCommand(): { command: string | null; args: string[] | null } {
    return { command: null, args: null };
  }

  readinessCheck(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['sh', '-c', READY_SCRIPT], env: this.#clientEnv(c) };
  }

  connectionUrl(c: DatabaseCredentials, host: string, port: number): string {
    const user = encodeURIComponent(this.#user(c));
    const password = encodeURIComponent(c.databasePassword);
    return `postgresql://${user}:${password}@${urlHost(host)}:${port}/${encodeURIComponent(this.#database(c))}`;
  }

  changePasswordCommand(c: DatabaseCredentials, newPassword: string, account: 'user' | 'root' = 'user'): ContainerCommand {
    if (account !== 'user') throw new Error("PostgreSQL has no root password: only the database user's password can be changed");
    const sql = `ALTER ROLE ${quoteIdent(this.#user(c))} WITH PASSWORD ${quoteLiteral(newPassword)}`;
    // psql substitutes no variables in --command, so the literal reaches the server as written.
    return { cmd: ['psql', '--no-psqlrc', '--no-password', '--quiet', '--set=ON_ERROR_STOP=1', '--host=127.0.0.1', `--command=${sql}`], env: this.#clientEnv(c) };
  }

  dumpCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['pg_dump', '--format=custom', '--no-password', '--host=127.0.0.1'], env: this.#clientEnv(c) };
  }

  /** Every table outside the system schemas with its exact row count (query_to_xml runs the count per table). */
  inventoryCommand(c: DatabaseCredentials): ContainerCommand {
    const sql =
      "select format('%I.%I', table_schema, table_name) || chr(9) || (xpath('/row/c/text()', query_to_xml(format('select count(*) as c from %I.%I', table_schema, table_name), false, true, '')))[1]::text " +
      "from information_schema.tables where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') order by 1";
    return {
      cmd: ['psql', '--no-password', '--host=127.0.0.1', '--no-align', '--tuples-only', '--set=ON_ERROR_STOP=1', `--dbname=dbname=${conninfoValue(this.#database(c))}`, '--command', sql],
      env: this.#clientEnv(c),
    };
  }

  createDatabaseCommand(c: DatabaseCredentials): ContainerCommand {
    const name = this.#database(c);
    return {
      cmd: ['sh', '-c', CREATE_SCRIPT],
      env: { ...this.#clientEnv(c), BERTH_EXISTS_SQL: `SELECT 1 FROM pg_database WHERE datname = ${quoteLiteral(name)}`, BERTH_CREATE_SQL: `CREATE DATABASE ${quoteIdent(name)}` },
    };
  }

  credentialsFromEnv(env: Record<string, string>): DatabaseCredentials {
    const databaseUser = env.POSTGRES_USER || 'postgres';
    return { databaseUser, databasePassword: env.POSTGRES_PASSWORD ?? '', databaseName: env.POSTGRES_DB || databaseUser, databaseRootPassword: null };
  }

  restoreCommand(c: DatabaseCredentials): ContainerCommand {
    // Without --dbname pg_restore would print SQL instead of restoring; PGDATABASE is not read for that.
    return {
      cmd: ['pg_restore', '--clean', '--if-exists', '--no-owner', '--exit-on-error', '--no-password', '--host=127.0.0.1', `--dbname=dbname=${conninfoValue(this.#database(c))}`],
      env: this.#clientEnv(c),
    };
  }
}
