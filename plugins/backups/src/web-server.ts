// Web-server backups: Berth's own data (its database and the data directory's keys) as the one
// archive core's ownData writes, encrypted with the operator's passphrase (config key
// backupPassphrase). It is stored as written (gzip over ciphertext gains nothing) and counts once
// it reads back and decrypts whole. It is the whole instance's data: only the instance owner
// creates, changes or runs one.
import { BerthError } from '@berth/core';
import { ENCRYPTED_SUFFIX } from './stream-encryption.ts';
import type { OwnDataArchiver } from './own-data/archiver.ts';
import type { Framing } from './upload.ts';

/** The databaseType of a web-server backup (the peer's value). */
export const WEB_SERVER = 'web-server';

export const isWebServer = (row: { databaseType: string }) => row.databaseType === WEB_SERVER;

/** The key of one archive: below the backup's prefix, named as the peer names its web-server files. */
export const archiveKey = (prefix: string, stamp: string) => `${prefix.replace(/^\/+|\/+$/g, '')}/webserver-backup-${stamp}.archive${ENCRYPTED_SUFFIX}`;

/** The archive is encrypted by its writer; read back, it must decrypt whole with the instance's passphrase. */
export const archiveFraming = (ownData: OwnDataArchiver): Framing => ({ encode: () => [], decode: () => [ownData.decrypt()] });

/** A 403 naming `field` unless the caller is the instance owner (the first admin). */
export async function assertInstanceOwner(accounts: { isInstanceOwner(userId: string): Promise<boolean> }, userId: string, field: string): Promise<void> {
  if (await accounts.isInstanceOwner(userId)) return;
  const message = "a web-server backup holds the whole instance's data: only the instance owner (the first admin) may create, change or run one";
  throw new BerthError('FORBIDDEN', `${field}: ${message}`, [{ path: [field], message }]);
}
