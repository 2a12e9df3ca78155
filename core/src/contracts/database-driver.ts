// A kind of database (postgres, mysql, mariadb, mongo, redis, libsql, or a third party's) as one
// driver: everything that differs between kinds lives here, so the shared database code
// (core/src/databases/) never asks which kind it runs. A new kind is a driver plus a
// provider: `export default defineProvider({ contract: 'database', id, options, create: () => new MyDriver() })`.
import type { TSchema } from 'typebox';

/** The credentials of one database, as its record holds them (fields a kind lacks are null). */
export interface DatabaseCredentials {
  databaseName: string | null;
  databaseUser: string | null;
  databasePassword: string;
  databaseRootPassword: string | null;
}

/** A program run inside the database's own container: an argument array, never a shell string. */
export interface ContainerCommand {
  /** argv[0] and its arguments. */
  cmd: string[];
  /** Extra environment of that one process (passwords go here, not into argv). */
  env?: Record<string, string>;
  /** When set, the command succeeds only if it exits 0 AND its stdout matches (for clients that exit 0 on errors, e.g. old redis-cli). */
  expectOutput?: RegExp;
}

/** The shared procedures a kind may leave out (its peer has none of that name). */
export type OptionalDatabaseProcedure = 'changePassword' | 'search' | 'saveExternalPort';

/** Whose password changePasswordCommand changes: the database user's (default) or, for kinds with one, the root account's. */
export type PasswordAccount = 'user' | 'root';

export interface DatabaseDriver {
  /** The kind's id: the API namespace, the `<kind>Id` field (postgresId...), the table name. Lower-case letters. */
  readonly kind: string;
  /** What users call it ("PostgreSQL"), for messages and the OpenAPI tags. */
  readonly label: string;
  /** The image `create` uses when none is given, per API variant (the current one wins when a request could be either). */
  readonly defaultImage: { current: string; older: string };
  /** The kind's own fields of its record besides the shared ones (the peer's mongo `replicaSets`): schema and default, kept with the record's settings; `create` when create takes it too. */
  readonly recordFields?: Record<string, { schema: TSchema; default: unknown; create?: boolean }>;
  /** Refuses a combination of the record's own fields (after create or a change): the field and why, or null when the record is fine. */
  recordIssue?(record: Record<string, unknown>): { field: string; message: string } | null;
  /** Container ports besides internalPort, each published on the host through a record field of its own (field → port, the peer's libsql `externalGRPCPort` → 5001): with them the kind serves `saveExternalPorts`, every external port at once. */
  readonly extraPorts?: Record<string, number>;
  /** The shared procedures the kind does not serve, as its peer lacks them: absent from its namespace and the OpenAPI document. */
  readonly omitProcedures?: readonly OptionalDatabaseProcedure[];
  /** What `create` answers: the record (default), or true where the peer answers that (libsql). */
  readonly createAnswer?: 'record' | 'true';
  /** Which credential fields `create` takes (required when true; absent from the schema when false). */
  readonly fields: { databaseName: boolean; databaseUser: boolean; databaseRootPassword: boolean };
  /** Schema of databasePassword in the current variant (e.g. postgres restricts its characters). */
  readonly passwordSchema: TSchema;
  /** Schema of databasePassword in the older variant (default: any string). */
  readonly olderPasswordSchema?: TSchema;
  /** Default databaseUser when the kind has one but create leaves it out (mongo's older clients). */
  readonly defaultUser?: string;
  /** The environment the container needs from the credentials (POSTGRES_PASSWORD...) and the record's own fields (recordFields; absent: their defaults). */
  containerEnv(c: DatabaseCredentials, record?: Record<string, unknown>): Record<string, string>;
  /** Keys of containerEnv whose values are secrets in another form than the passwords (libsql's SQLD_HTTP_AUTH, basic:<base64 of user:password>): masked like them in a deploy's log and error. */
  readonly secretEnv?: readonly string[];
  /** Where the data lives inside the container: the named data volume is mounted here. */
  readonly dataPath: string;
  /** The port the database listens on inside the container. */
  readonly internalPort: number;
  /** The start command and args when the user sets none (null = the image's own); may carry the password (redis). */
  startCommand(c: DatabaseCredentials, record?: Record<string, unknown>): { command: string | null; args: string[] | null };
  /** Run inside the running container until it exits 0: the database accepts connections with these credentials. */
  readinessCheck(c: DatabaseCredentials): ContainerCommand;
  /** The connection URL for `host:port` (internal: the appName and internalPort; external: the host and externalPort). */
  connectionUrl(c: DatabaseCredentials, host: string, port: number): string;
  /** Changes the password inside the running database (the record and the service env are updated by the caller); 'root' only where fields.databaseRootPassword; a kind that omits changePassword throws why. */
  changePasswordCommand(c: DatabaseCredentials, newPassword: string, account?: PasswordAccount): ContainerCommand;
  /** The suffix of `backup.manualBackup<Suffix>` when it is not the kind capitalised (the peer spells mysql's "MySql"). */
  readonly backupProcedureSuffix?: string;
  /** Writes a dump of the database to stdout (for backups). */
  dumpCommand(c: DatabaseCredentials): ContainerCommand;
  /** A marker the dump program may append after the dump (redis-cli --rdb - after a diskless sync): dropped when the last `bytes` match `pattern`. */
  readonly dumpTrailer?: { bytes: number; pattern: RegExp };
  /** Prints what a restored copy holds, one line per table (name, tab, exact row count; redis: per database, its keys), for the check after each backup; absent = the restore exiting 0 is the check. */
  inventoryCommand?(c: DatabaseCredentials): ContainerCommand;
  /** Turns the inventory program's stdout into those lines when the program cannot print them itself (redis-cli's INFO); absent = its stdout as it is. */
  inventoryLines?(stdout: string): string;
  /** Creates c.databaseName when it does not exist yet (a restore into a new database); absent = the kind has no named databases to create. */
  createDatabaseCommand?(c: DatabaseCredentials): ContainerCommand;
  /** The credentials a container of the kind's image was started with, read from its environment (the inverse of containerEnv): for databases Berth did not create, e.g. a compose service; absent = not supported. */
  credentialsFromEnv?(env: Record<string, string>): DatabaseCredentials;
  /** Reads a dump from stdin and restores it (for restores); kinds with offlineRestore may throw. */
  restoreCommand(c: DatabaseCredentials): ContainerCommand;
  /**
   * For kinds whose running server cannot take a dump (redis): the file the dump becomes below the
   * data path, what to delete there first and small files to write beside it; a restore stops the
   * service, writes them into the data volume from a helper container of the same image (owned
   * like the data path), and starts the service again. The check after a backup writes them the
   * same way into a throwaway container before its server starts. With archive 'tar' (libsql) the
   * dump is a tar archive holding `file`, a directory below the data path, unpacked in its place.
   */
  readonly offlineRestore?: { file: string; remove: string[]; files?: Record<string, string>; archive?: 'tar' };
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `database.<kind>`: a database kind; the workload kit registers its records and `<kind>.*` procedures. */
    database: DatabaseDriver;
  }
}
