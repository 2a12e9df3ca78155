// Redis as a Berth database kind: no environment of its own; the password is part of the start
// command (`redis-server --requirepass`, as the peer does), and redis-cli gets it through
// REDISCLI_AUTH. redis-cli exits 0 even when a command is refused (NOAUTH), so its commands say
// which output means success (expectOutput).
import { Type, type ContainerCommand, type DatabaseCredentials, type DatabaseDriver } from '@berth/core';

const PORT = 6379;
const CLI = ['redis-cli', '-h', '127.0.0.1', '-p', String(PORT), '--no-auth-warning'];

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export class RedisDriver implements DatabaseDriver {
  readonly kind: string = 'redis';
  readonly label: string = 'Redis';
  readonly defaultImage = { current: 'redis:8', older: 'redis:7' };
  readonly fields = { databaseName: false, databaseUser: false, databaseRootPassword: false };
  readonly passwordSchema = Type.String();
  readonly dataPath = '/data';
  /** redis-cli writes the 40-character EOF mark of a diskless transfer after the RDB when it writes to stdout. */
  readonly dumpTrailer = { bytes: 40, pattern: /^[0-9a-f]{40}$/ };
  /**
   * With appendonly on, Redis (7 and later) loads its data from the append-only files only: the
   * RDB snapshot becomes the base file of a new multi-part AOF, named by its manifest.
   */
  readonly offlineRestore = {
    file: 'appendonlydir/appendonly.aof.1.base.rdb',
    remove: ['appendonlydir', 'appendonly.aof', 'dump.rdb'],
    files: { 'appendonlydir/appendonly.aof.manifest': 'file appendonly.aof.1.base.rdb seq 1 type b\n' },
  };
  readonly internalPort = PORT;

  #cliEnv(password: string): Record<string, string> {
    return password === '' ? {} : { REDISCLI_AUTH: password };
  }

  containerEnv(): Record<string, string> {
    return {};
  }

  /**
   * Arguments to the image's own entrypoint (which drops to the redis user), not a new command.
   * appendonly: every write reaches the volume within a second, not only at the next snapshot.
   * An empty password means no password: protected mode would then refuse every outside client.
   */
  startCommand(c: DatabaseCredentials): { command: string | null; args: string[] | null } {
    const auth = c.databasePassword === '' ? ['--protected-mode', 'no'] : ['--requirepass', c.databasePassword];
    return { command: null, args: ['redis-server', '--dir', this.dataPath, '--appendonly', 'yes', ...auth] };
  }

  readinessCheck(c: DatabaseCredentials): ContainerCommand {
    return { cmd: [...CLI, 'ping'], env: this.#cliEnv(c.databasePassword), expectOutput: /^PONG\s*$/ };
  }

  connectionUrl(c: DatabaseCredentials, host: string, port: number): string {
    return `redis://default:${encodeURIComponent(c.databasePassword)}@${urlHost(host)}:${port}`;
  }

  /** Changes the running server's password; the start command carries the new one from the next deployment on. */
  changePasswordCommand(c: DatabaseCredentials, newPassword: string, account: 'user' | 'root' = 'user'): ContainerCommand {
    if (account !== 'user') throw new Error('Redis has no root password: only its password can be changed');
    // redis-cli reads options only before the command name, so the value is passed as it is.
    return { cmd: [...CLI, 'CONFIG', 'SET', 'requirepass', newPassword], env: this.#cliEnv(c.databasePassword), expectOutput: /^OK\s*$/ };
  }

  /** The server's snapshot (RDB) on stdout, taken by a replication sync (redis-cli 7 and later write "-" to stdout). */
  dumpCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: [...CLI, '--rdb', '-'], env: this.#cliEnv(c.databasePassword) };
  }

  /** The keys of each database of a restored copy; an empty copy has no database lines. */
  inventoryCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: [...CLI, 'INFO', 'keyspace'], env: this.#cliEnv(c.databasePassword), expectOutput: /^# Keyspace\r?$/m };
  }

  /** INFO's "db0:keys=53,expires=0,..." lines (CRLF, under a "# Keyspace" header) as "db0<TAB>53". */
  inventoryLines(stdout: string): string {
    return [...stdout.matchAll(/^(db\d+):keys=(\d+)/gm)].map(([, db, keys]) => `${db}\t${keys}`).join('\n');
  }

  restoreCommand(): ContainerCommand {
    throw new Error('Redis cannot restore a dump from a running server: stop the service, put the dump as dump.rdb into its data volume (without appendonly files) and start it again');
  }
}
