// The instance's own-data archive as a service (the `ownData` of the container): plugins write
// it without seeing the database's connection or the operator's passphrase (config key
// backups.backupPassphrase), which stays in here and is never logged.
import type { Writable } from 'node:stream';
import type { PoolConfig } from 'pg';
import { conflict } from '@berth/core';
import { decryptStream } from '../stream-encryption.ts';
import { writeOwnDataArchive } from './archive.ts';

export class OwnDataArchiver {
  readonly #pool: PoolConfig;
  readonly #dataDir: string;
  readonly #passphrase: string | undefined;

  constructor(pool: PoolConfig, dataDir: string, passphrase: string | undefined) {
    this.#pool = pool;
    this.#dataDir = dataDir;
    this.#passphrase = passphrase;
  }

  /** Whether the operator set the passphrase (config key backupPassphrase). */
  get configured(): boolean {
    return !!this.#passphrase;
  }

  /** A 409 CONFLICT saying how to set the passphrase, when it is not set. */
  assertConfigured(): void {
    if (!this.#passphrase)
      throw conflict("Backups of Berth's own data need the operator's passphrase: set the config key backupPassphrase (env BERTH_BACKUP_PASSPHRASE, 16 characters or more) and restart Berth");
  }

  /** Streams the encrypted archive (database dump + the data directory's keys) into `sink`, which it ends. */
  async write(sink: Writable): Promise<void> {
    this.assertConfigured();
    await writeOwnDataArchive(this.#pool, this.#dataDir, this.#passphrase!, sink);
  }

  /** A transform that decrypts an archive of this instance (its authentication checked at the end). */
  decrypt() {
    this.assertConfigured();
    return decryptStream(this.#passphrase!);
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The archive of Berth's own data (web-server backups). */
    ownData: OwnDataArchiver;
  }
}
