// @berth/provider-storage-local: backup files in a directory on the host. A destination's
// bucket is a directory below the operator's root (dataDir/backups unless `root` is set):
// nothing outside the root is ever written.
import path from 'node:path';
import { defineProvider, Type } from '@berth/core';
import { LocalStorage } from './local-storage.ts';

export default defineProvider({
  contract: 'storage',
  id: 'local',
  options: Type.Object(
    { root: Type.String({ env: 'BERTH_STORAGE_LOCAL_ROOT', default: '', description: 'directory that holds the destinations (absolute); empty = <dataDir>/backups' }) },
    { additionalProperties: false },
  ),
  create: (options, { config }) => new LocalStorage(options.root ? path.resolve(options.root) : path.resolve(config.dataDir, 'backups')),
});
export { LocalStorage };
