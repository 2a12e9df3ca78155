// MongoDB as a Berth database kind: the public mongo image's root user (MONGO_INITDB_ROOT_*),
// checked and changed with mongosh (images of 5.0 and later), dumped with mongodump.
// mongosh reads the credentials from process.env inside fixed scripts, so no value is ever
// interpolated into JavaScript; the database tools have no such variable, so they get their
// URI from the environment through a fixed sh script.
import { Type, type ContainerCommand, type DatabaseCredentials, type DatabaseDriver } from '@berth/core';

/** The peer's current-variant password rule for mysql, mariadb and mongo: letters, digits and these signs, empty allowed. */
export const MONGO_PASSWORD_PATTERN = '^[a-zA-Z0-9@#%^&*()_+\\-=[\\]{}|;:,.<>?~`]*$';

const PORT = 27017;

// The image's first-start server listens on 127.0.0.1 only (and is stopped once the root user
// exists), so readiness connects through the container's own name: only the real server answers there.
const READY_SCRIPT = [
  "const e = process.env, host = require('os').hostname();",
  "const uri = 'mongodb://' + encodeURIComponent(e.BERTH_MONGO_USER) + ':' + encodeURIComponent(e.BERTH_MONGO_PASSWORD) + '@' + host + ':' + e.BERTH_MONGO_PORT + '/admin?directConnection=true&serverSelectionTimeoutMS=5000';",
  'const reply = connect(uri).runCommand({ ping: 1 });',
  "if (!reply || reply.ok !== 1) throw new Error('ping failed');",
].join('\n');

const CHANGE_SCRIPT = [
  'const e = process.env;',
  "const uri = 'mongodb://' + encodeURIComponent(e.BERTH_MONGO_USER) + ':' + encodeURIComponent(e.BERTH_MONGO_PASSWORD) + '@127.0.0.1:' + e.BERTH_MONGO_PORT + '/admin?directConnection=true&serverSelectionTimeoutMS=5000';",
  'connect(uri).changeUserPassword(e.BERTH_MONGO_USER, e.BERTH_MONGO_NEW_PASSWORD);',
].join('\n');

// What a restored copy holds, for the check after each backup: every collection of every database
// but the server's own (admin, config, local), with its exact document count, one
// "database.collection<TAB>count" line each, sorted; views and system collections are left out.
const INVENTORY_SCRIPT = [
  'const e = process.env;',
  "const uri = 'mongodb://' + encodeURIComponent(e.BERTH_MONGO_USER) + ':' + encodeURIComponent(e.BERTH_MONGO_PASSWORD) + '@127.0.0.1:' + e.BERTH_MONGO_PORT + '/admin?directConnection=true&serverSelectionTimeoutMS=5000';",
  'const admin = connect(uri);',
  "const names = admin.adminCommand({ listDatabases: 1, nameOnly: true }).databases.map(d => d.name).filter(n => !['admin', 'config', 'local'].includes(n)).sort();",
  'const lines = [];',
  'for (const name of names) {',
  '  const database = admin.getSiblingDB(name);',
  "  const collections = database.getCollectionInfos({ type: 'collection' }).map(c => c.name).filter(c => !c.startsWith('system.')).sort();",
  "  for (const c of collections) lines.push(name + '.' + c + '\\t' + database.getCollection(c).countDocuments({}));",
  '}',
  "if (lines.length) print(lines.join('\\n'));",
].join('\n');

const DUMP_SCRIPT = 'exec mongodump --archive --uri="$BERTH_MONGO_URI"';
const RESTORE_SCRIPT = 'exec mongorestore --archive --drop --uri="$BERTH_MONGO_URI"';

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export class MongoDriver implements DatabaseDriver {
  readonly kind: string = 'mongo';
  readonly label: string = 'MongoDB';
  readonly defaultImage = { current: 'mongo:15', older: 'mongo:15' };
  readonly fields = { databaseName: false, databaseUser: true, databaseRootPassword: false };
  /** The peer's flag; Berth runs mongo as a single instance, so it is always false. */
  readonly recordFields = { replicaSets: { schema: Type.Literal(false, { description: 'replica sets are not supported yet: always false' }), default: false } };
  readonly passwordSchema = Type.String({ pattern: MONGO_PASSWORD_PATTERN });
  readonly olderPasswordSchema = Type.String();
  /** What the image's root user is called when an older client's create leaves databaseUser out. */
  readonly defaultUser = 'mongo';
  readonly dataPath = '/data/db';
  readonly internalPort = PORT;

  #user(c: DatabaseCredentials): string {
    return c.databaseUser ?? this.defaultUser;
  }

  #shellEnv(c: DatabaseCredentials): Record<string, string> {
    return { BERTH_MONGO_USER: this.#user(c), BERTH_MONGO_PASSWORD: c.databasePassword, BERTH_MONGO_PORT: String(PORT) };
  }

  /** The tools' URI over loopback, as the root user of the admin database. */
  #toolsEnv(c: DatabaseCredentials): Record<string, string> {
    return { BERTH_MONGO_URI: `mongodb://${encodeURIComponent(this.#user(c))}:${encodeURIComponent(c.databasePassword)}@127.0.0.1:${PORT}/?authSource=admin` };
  }

  containerEnv(c: DatabaseCredentials): Record<string, string> {
    return { MONGO_INITDB_ROOT_USERNAME: this.#user(c), MONGO_INITDB_ROOT_PASSWORD: c.databasePassword };
  }

  credentialsFromEnv(env: Record<string, string>): DatabaseCredentials {
    return {
      databaseUser: env.MONGO_INITDB_ROOT_USERNAME || null,
      databasePassword: env.MONGO_INITDB_ROOT_PASSWORD ?? '',
      databaseName: env.MONGO_INITDB_DATABASE || null,
      databaseRootPassword: null,
    };
  }

  startCommand(): { command: string | null; args: string[] | null } {
    return { command: null, args: null };
  }

  readinessCheck(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['mongosh', '--nodb', '--quiet', '--eval', READY_SCRIPT], env: this.#shellEnv(c) };
  }

  connectionUrl(c: DatabaseCredentials, host: string, port: number): string {
    return `mongodb://${encodeURIComponent(this.#user(c))}:${encodeURIComponent(c.databasePassword)}@${urlHost(host)}:${port}`;
  }

  changePasswordCommand(c: DatabaseCredentials, newPassword: string, account: 'user' | 'root' = 'user'): ContainerCommand {
    if (account !== 'user') throw new Error('MongoDB has no separate root password: its user is the root user');
    return { cmd: ['mongosh', '--nodb', '--quiet', '--eval', CHANGE_SCRIPT], env: { ...this.#shellEnv(c), BERTH_MONGO_NEW_PASSWORD: newPassword } };
  }

  /** Every collection of the restored copy with its exact document count, through mongosh (the credentials in its environment). */
  inventoryCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['mongosh', '--nodb', '--quiet', '--eval', INVENTORY_SCRIPT], env: this.#shellEnv(c) };
  }

  dumpCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['sh', '-c', DUMP_SCRIPT], env: this.#toolsEnv(c) };
  }

  restoreCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: ['sh', '-c', RESTORE_SCRIPT], env: this.#toolsEnv(c) };
  }
}
