// @berth/provider-storage-s3: backup files on an S3-compatible service, through the AWS SDK v3
// (imported when a destination is first opened, never at boot).
import { defineProvider, Type } from '@berth/core';
import { S3Storage } from './s3-storage.ts';

export default defineProvider({
  contract: 'storage',
  id: 's3',
  options: Type.Object(
    {
      partSizeMiB: Type.Integer({ env: 'BERTH_STORAGE_S3_PART_SIZE_MIB', minimum: 5, maximum: 512, default: 8, description: 'size of one part of a multipart upload (S3 needs at least 5 MiB)' }),
      queueSize: Type.Integer({ env: 'BERTH_STORAGE_S3_QUEUE_SIZE', minimum: 1, maximum: 16, default: 2, description: 'parts uploaded at once (memory held: partSizeMiB × queueSize)' }),
      forcePathStyle: Type.Boolean({ default: true, description: 'bucket in the path (MinIO, R2 and most S3-compatible services), not in the host name' }),
    },
    { additionalProperties: false },
  ),
  create: options => new S3Storage(options),
});
export { S3Storage };
