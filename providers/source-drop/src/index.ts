// @berth/provider-source-drop: source type "drop" (a zip archive uploaded with application.dropDeployment).
import path from 'node:path';
import { defineProvider, Type } from '@berth/core';
import { DropSource } from './drop-source.ts';

export const DropOptions = Type.Object(
  {
    maxEntries: Type.Integer({ env: 'BERTH_SOURCE_DROP_MAX_ENTRIES', minimum: 1, default: 50_000, description: 'The most entries (files and directories) an uploaded archive may hold' }),
    maxUnpackedBytes: Type.Integer({
      env: 'BERTH_SOURCE_DROP_MAX_UNPACKED_BYTES',
      minimum: 1,
      default: 1024 ** 3,
      description: "The most bytes an uploaded archive's files may hold once inflated (the archive itself is capped by uploadLimit)",
    }),
  },
  { additionalProperties: false },
);

export default defineProvider({
  contract: 'source',
  id: 'drop',
  options: DropOptions,
  create: (options, { config }) => new DropSource({ root: path.resolve(config.dataDir, 'sources', 'drop'), limits: options }),
});
export { DropSource, type DropSourceOptions } from './drop-source.ts';
export { unzipChecked, ArchiveRefused, type UnzipLimits } from './checked-unzip.ts';
