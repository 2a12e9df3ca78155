// Valkey (the Linux Foundation's fork of Redis 7.2) as a Berth database kind, written the way a
// third party would: against the DatabaseDriver contract of @berth/core only, no Berth internals.
//
// Like the public valkey/valkey image expects: no environment of its own, the password is an argument
// of the start command (`valkey-server --requirepass`), the data lives in /data. valkey-cli exits 0
// even when the server refuses a command (NOAUTH), so every command says which output is success.
import { Type, type ContainerCommand, type DatabaseCredentials, type DatabaseDriver } from '@berth/core';

const PORT = 6379;
const DATA = '/data';
const SERVER = 'valkey-server';
// -h 127.0.0.1: the client runs inside the database's own container.
const CLI = ['valkey-cli', '-h', '127.0.0.1', '-p', String(PORT), '--no-auth-warning'];

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** The client's password, through the environment (never argv, where `ps` shows it). */
function cliEnv(password: string): Record<string, string> {
  // valkey-cli 8 reads VALKEYCLI_AUTH; earlier builds (and redis-cli) only REDISCLI_AUTH.
  return password === '' ? {} : { VALKEYCLI_AUTH: password, REDISCLI_AUTH: password };
}

export class ValkeyDriver implements DatabaseDriver {
  readonly kind = 'valkey';
  readonly label = 'Valkey';
  readonly defaultImage = { current: 'valkey/valkey:8', older: 'valkey/valkey:8' };
  readonly fields = { databaseName: false, databaseUser: false, databaseRootPassword: false };
  readonly passwordSchema = Type.String({ description: 'any string (empty: no password)' });
  readonly dataPath = DATA;
  readonly internalPort = PORT;

  containerEnv(): Record<string, string> {
    return {};
  }

  /**
   * Arguments to the image's own entrypoint, which starts valkey-server as the valkey user.
   * appendonly: every write reaches the volume within a second, not only at the next snapshot.
   * An empty password means no password: protected mode would then refuse every outside client.
   */
  startCommand(c: DatabaseCredentials): { command: string | null; args: string[] | null } {
    const auth = c.databasePassword === '' ? ['--protected-mode', 'no'] : ['--requirepass', c.databasePassword];
    return { command: null, args: [SERVER, '--dir', DATA, '--appendonly', 'yes', ...auth] };
  }

  readinessCheck(c: DatabaseCredentials): ContainerCommand {
    return { cmd: [...CLI, 'PING'], env: cliEnv(c.databasePassword), expectOutput: /^PONG\s*$/ };
  }

  /** Valkey speaks the Redis protocol: every Redis client takes this URL (the ACL user of requirepass is "default"). */
  connectionUrl(c: DatabaseCredentials, host: string, port: number): string {
    return `redis://default:${encodeURIComponent(c.databasePassword)}@${urlHost(host)}:${port}`;
  }

  /**
   * Changes the running server's password; the start command carries the new one from the next deployment on.
   * The new password is an argument: CONFIG SET takes its value only from the command line (valkey-cli's -x
   * would read it from stdin, but the kit runs commands without input). It lives as long as this exec.
   */
  changePasswordCommand(c: DatabaseCredentials, newPassword: string, account: 'user' | 'root' = 'user'): ContainerCommand {
    if (account !== 'user') throw new Error('Valkey has no root password: only its password can be changed');
    return { cmd: [...CLI, 'CONFIG', 'SET', 'requirepass', newPassword], env: cliEnv(c.databasePassword), expectOutput: /^OK\s*$/ };
  }

  /** The server's snapshot (RDB) on stdout, taken through a replication sync. */
  dumpCommand(c: DatabaseCredentials): ContainerCommand {
    return { cmd: [...CLI, '--rdb', '-'], env: cliEnv(c.databasePassword) };
  }

  restoreCommand(): ContainerCommand {
    throw new Error('Valkey cannot load a dump into a running server: stop the service, put the dump as dump.rdb into its data volume (without the appendonlydir) and start it again');
  }
}
