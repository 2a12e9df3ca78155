// One backup run and one restore. A run streams the kind's dump through gzip and a sha256 to
// the destination, then reads the object back (same checksum, a whole gzip) before it calls
// the backup a success; retention then deletes this backup's own oldest files. A restore
// checks the file against the checksum recorded when it was written, then streams it through
// gunzip into the kind's restore program.
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { EntityManager, EventBus, Logger, SecretBox } from '@berth/core';
import { decryptStream, ENCRYPTED_SUFFIX, isEncryptedKey } from './stream-encryption.ts';
import type { OwnDataArchiver } from './own-data/archiver.ts';
import { gzipFraming, inspectObject, storeWhole, type Framing } from './upload.ts';
import type { WorkloadRegistry } from '@berth/plugin-workloads';
import { ownerKindOf } from './owner-kinds.ts';
import { Backup, BackupFile, Destination, type BackupFileRow, type BackupRow, type DestinationRow, type RestoreRow } from './entities.ts';
import { archiveFraming, archiveKey, isWebServer } from './web-server.ts';
import type { DestinationService } from './destinations.ts';

export const stamp = (d: Date) => d.toISOString().replace(/[:.]/g, '-');
export const fileKey = (prefix: string, at: Date) => `${prefix.replace(/^\/+|\/+$/g, '')}/${stamp(at)}.dump.gz`;

/** What a backup's dump, check and restore address: the database, and for a compose backup its service and engine. */
const targetOf = (backup: BackupRow) => ({ databaseName: backup.database, serviceName: backup.serviceName ?? null, databaseType: backup.databaseType });

export interface RunResult {
  key: string;
  size: number;
  sha256: string;
}

/**
 * A run's outcome on the bus, durably with `em` (call it inside the transaction that records the
 * outcome on the backup): ownDataBackup for a backup of Berth's own data, databaseBackup otherwise.
 */
export function announceBackup(events: EventBus, backup: BackupRow, outcome: { status: 'success' | 'error'; file: string | null; error: string | null }, em: EntityManager): Promise<void> {
  return isWebServer(backup)
    ? events.emitDurable('ownDataBackup', { backupId: backup.backupId, organizationId: backup.organizationId, ...outcome, at: new Date().toISOString() }, em)
    : events.emitDurable('databaseBackup', { backupId: backup.backupId, organizationId: backup.organizationId, databaseType: backup.databaseType, ...outcome }, em);
}

export class BackupRunner {
  readonly #workloads: () => WorkloadRegistry;
  readonly #destinations: DestinationService;
  readonly #events: () => EventBus;
  readonly #logger: () => Logger;
  readonly #secrets: () => SecretBox;

  /** Whether each run checks its file at once (backupVerify "always"); on a schedule, verify-schedule.ts calls verifyFile. */
  readonly #verify: () => boolean;
  readonly #ownData: () => OwnDataArchiver;

  constructor(o: {
    workloads: () => WorkloadRegistry;
    destinations: DestinationService;
    events: () => EventBus;
    logger: () => Logger;
    secrets: () => SecretBox;
    verify: () => boolean;
    ownData: () => OwnDataArchiver;
  }) {
    this.#ownData = o.ownData;
    this.#verify = o.verify;
    this.#secrets = o.secrets;
    this.#workloads = o.workloads;
    this.#destinations = o.destinations;
    this.#events = o.events;
    this.#logger = o.logger;
  }

  /** The dump and restore of the kind that owns a backup (or restore) of this backupType and databaseType. */
  #source(backupType: string, databaseType: string) {
    const k = ownerKindOf(this.#workloads().supporting('backups'), backupType, databaseType);
    if (!k?.backups) throw new Error(`No workload kind with ${backupType} backups of ${databaseType} is enabled`);
    return k.backups;
  }

  /** Runs the backup now; records the outcome on the backup and emits databaseBackup; rethrows a failure. */
  async run(backup: BackupRow, em: EntityManager, log: (line: string) => void = () => {}): Promise<RunResult> {
    try {
      const result = await this.#run(backup, em, log);
      backup.lastRunAt = new Date();
      backup.lastError = null;
      await em.transactional(tx => announceBackup(this.#events(), backup, { status: 'success', file: result.key, error: null }, tx));
      return result;
    } catch (e) {
      const message = (e as Error).message;
      backup.lastRunAt = new Date();
      backup.lastError = message;
      await em.transactional(tx => announceBackup(this.#events(), backup, { status: 'error', file: null, error: message }, tx));
      throw e;
    }
  }

  /** Stores the file and records it with its checksum (verified: null until checked). */
  async #store(backup: BackupRow, destination: DestinationRow, key: string, framing: Framing, produce: (sink: Writable) => Promise<void>, em: EntityManager, log: (line: string) => void) {
    const { size, sha256 } = await storeWhole(this.#destinations.open(destination), key, framing, produce).catch((e: Error) => {
      throw new Error(`Backup of ${isWebServer(backup) ? "Berth's own data" : backup.database} failed: ${e.message}`);
    });
    const file = em.create(BackupFile, {
      backupId: backup.backupId,
      destinationId: destination.destinationId,
      organizationId: backup.organizationId,
      key,
      size,
      sha256,
      verified: null,
      verification: null,
    }) as BackupFileRow;
    await em.flush();
    log(`Stored ${key}: ${size} bytes, sha256 ${sha256}`);
    return file;
  }

  /** Berth's own data: the encrypted archive streamed from core's writer to the destination (no copy on disk). */
  async #runWebServer(backup: BackupRow, destination: DestinationRow, em: EntityManager, log: (line: string) => void): Promise<RunResult> {
    const ownData = this.#ownData();
    ownData.assertConfigured();
    const key = archiveKey(backup.prefix, stamp(new Date()));
    log(`Writing the encrypted archive of Berth's own data (its database and the data directory's keys) to ${key}`);
    const file = await this.#store(backup, destination, key, archiveFraming(ownData), sink => ownData.write(sink), em, log);
    await this.#retain(backup, em, log);
    return { key, size: file.size, sha256: file.sha256 };
  }

  async #run(backup: BackupRow, em: EntityManager, log: (line: string) => void): Promise<RunResult> {
    const destination = await em.findOneOrFail(Destination, { destinationId: backup.destinationId });
    if (isWebServer(backup)) return this.#runWebServer(backup, destination, em, log);
    const source = this.#source(backup.backupType, backup.databaseType);
    const target = targetOf(backup);
    const databaseId = backup.databaseId!;
    const at = new Date();
    const passphrase = backup.encryptionKey ? this.#secrets().decrypt(backup.encryptionKey) : null;
    const key = fileKey(backup.prefix, at) + (passphrase ? ENCRYPTED_SUFFIX : '');
    log(`Dumping ${backup.database} to ${key}`);
    const file = await this.#store(backup, destination, key, gzipFraming(passphrase), sink => source.dump(databaseId, target, sink, { em, log }), em, log);
    if (this.#verify() && source.verify) {
      if (!(await this.verifyFile(backup, file, em, { log }))) throw new Error(`Backup of ${backup.database} failed its restore check: ${file.verification}`);
    }
    await this.#retain(backup, em, log);
    return { key, size: file.size, sha256: file.sha256 };
  }

  /** Whether the backup's kind can check a file in a throwaway container. */
  canVerify(backup: BackupRow): boolean {
    if (isWebServer(backup) || !backup.databaseId) return false;
    try {
      return Boolean(this.#source(backup.backupType, backup.databaseType).verify);
    } catch {
      return false;
    }
  }

  /**
   * Restores the file into a throwaway container of the backup's kind and records the driver's
   * check with it (verified, verification); answers whether it restored. The file's record is
   * flushed either way, except when `signal` aborts the check: then nothing is recorded (the file
   * stays unchecked) and the abort's reason is thrown.
   */
  async verifyFile(backup: BackupRow, file: BackupFileRow, em: EntityManager, io: { log?: (line: string) => void; signal?: AbortSignal } = {}): Promise<boolean> {
    const log = io.log ?? (() => {});
    const gunzip = createGunzip();
    try {
      const source = this.#source(backup.backupType, backup.databaseType);
      if (!source.verify) throw new Error(`${backup.databaseType} backups cannot be checked in a throwaway container`);
      const target = targetOf(backup);
      const destination = await em.findOneOrFail(Destination, { destinationId: file.destinationId });
      const store = this.#destinations.open(destination);
      const passphrase = isEncryptedKey(file.key) && backup.encryptionKey ? this.#secrets().decrypt(backup.encryptionKey) : null;
      log(`Restoring ${file.key} into a throwaway container to prove it restores`);
      const input = await store.get(file.key, { signal: io.signal });
      const feeding = (passphrase ? pipeline(input, decryptStream(passphrase), gunzip) : pipeline(input, gunzip)).catch(() => {});
      file.verification = await source.verify(backup.databaseId!, target, gunzip, { em, log, signal: io.signal });
      file.verified = true;
      await feeding;
    } catch (e) {
      gunzip.destroy();
      if (io.signal?.aborted) throw io.signal.reason ?? e;
      file.verified = false;
      file.verification = (e as Error).message;
    }
    await em.flush();
    return file.verified;
  }

  /** Keeps the newest keepLatestCount files of this backup; deletes only its own older ones. */
  async #retain(backup: BackupRow, em: EntityManager, log: (line: string) => void): Promise<void> {
    if (!backup.keepLatestCount) return;
    const files = await em.find(BackupFile, { backupId: backup.backupId }, { orderBy: { createdAt: 'desc', key: 'desc' } });
    const old = files.slice(backup.keepLatestCount);
    if (!old.length) return;
    const destinations = new Map<string, ReturnType<DestinationService['open']>>();
    for (const f of old) {
      try {
        if (!destinations.has(f.destinationId)) {
          const d = await em.findOne(Destination, { destinationId: f.destinationId });
          if (!d) {
            em.remove(f);
            continue;
          }
          destinations.set(f.destinationId, this.#destinations.open(d));
        }
        await destinations.get(f.destinationId)!.remove(f.key);
        em.remove(f);
        log(`Retention: deleted ${f.key}`);
      } catch (e) {
        this.#logger().warn({ err: e, key: f.key }, 'backup retention could not delete a file; it is kept and tried again next run');
      }
    }
    await em.flush();
  }

  /** The passphrase of an encrypted file: its backup's, else the one given with the restore; null for a plain file. */
  async #passphraseFor(restore: RestoreRow, backupId: string | null, em: EntityManager): Promise<string | null> {
    if (!isEncryptedKey(restore.backupFile)) return null;
    const backup = backupId ? await em.findOne(Backup, { backupId }) : null;
    const sealed = restore.encryptionKey ?? backup?.encryptionKey ?? null;
    if (!sealed) throw new Error(`${restore.backupFile} is encrypted: give its encryptionKey with the restore`);
    return this.#secrets().decrypt(sealed);
  }

  /** Restores the file into the database: checked against its recorded checksum first, then streamed through gunzip. */
  async restore(restore: RestoreRow, em: EntityManager, io: { signal: AbortSignal; log(line: string): void }): Promise<void> {
    const destination = await em.findOneOrFail(Destination, { destinationId: restore.destinationId });
    const store = this.#destinations.open(destination);
    const source = this.#source(restore.backupType, restore.databaseType);
    const recorded = await em.findOne(BackupFile, { destinationId: restore.destinationId, key: restore.backupFile }, { orderBy: { createdAt: 'desc' } });
    const passphrase = await this.#passphraseFor(restore, recorded?.backupId ?? null, em);
    if (recorded) {
      io.log(`Checking ${restore.backupFile} against the checksum recorded when it was written`);
      const found = await inspectObject(await store.get(restore.backupFile, { signal: io.signal }), gzipFraming(passphrase)).catch((e: Error) => {
        throw new Error(`${restore.backupFile} is damaged: ${e.message}`);
      });
      if (found.sha256 !== recorded.sha256) throw new Error(`${restore.backupFile} is damaged: its sha256 is ${found.sha256}, ${recorded.sha256} was written`);
    } else {
      io.log(`${restore.backupFile} was not written by Berth here: no checksum to compare, only the gzip is checked`);
    }
    io.log(`Restoring ${restore.backupFile} into ${restore.databaseName}`);
    const gunzip = createGunzip();
    const input = await store.get(restore.backupFile, { signal: io.signal });
    const feeding = (passphrase ? pipeline(input, decryptStream(passphrase), gunzip) : pipeline(input, gunzip)).catch(() => {});
    const target = { databaseName: restore.databaseName, serviceName: restore.serviceName ?? null, databaseType: restore.databaseType };
    await source.restore(restore.databaseId, target, gunzip, { em, signal: io.signal, log: io.log });
    await feeding;
    io.log('Restore done');
  }
}

declare module '@berth/core' {
  interface BerthEvents {
    /** A database backup ran: success with its file, or error with the reason (a missed schedule window too). */
    databaseBackup: { backupId: string; organizationId: string; databaseType: string; status: 'success' | 'error'; file: string | null; error: string | null };
    /** A backup of Berth's own data (a web-server backup) ran, or missed its window, or its file failed a check. */
    ownDataBackup: { backupId: string; organizationId: string; status: 'success' | 'error'; file: string | null; error: string | null; at: string };
  }
}
