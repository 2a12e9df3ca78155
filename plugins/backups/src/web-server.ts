// Web-server backups: Berth's own data (its database and the data directory's keys) as the one
// archive core's ownData writes, encrypted with the operator's passphrase (config key
// backupPassphrase). It is stored as written (gzip over ciphertext gains nothing) and counts once
// it reads back and decrypts whole. It is the whole instance's data: only the instance owner
// creates, changes or runs one.
import { BerthError, type Principal } from '@berth/core';
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

/**
 * A 403 naming `field` unless the caller is an instance operator (docs/security.md): a check of the
 * record's kind, which the procedure's declared scope (organization) cannot state.
 */
export async function assertInstanceOperator(accounts: { isInstanceOperator(principal: Principal): Promise<boolean> }, principal: Principal, field: string): Promise<void> {
  if (await accounts.isInstanceOperator(principal)) return;
  const message = "a web-server backup holds the whole instance's data: only the instance's operators (the owner and admins of its first organization) may create, change or run one";
  throw new BerthError('FORBIDDEN', `${field}: ${message}`, [{ path: [field], message }]);
}
