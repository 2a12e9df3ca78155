import t from 'tap';
import { startS3TestServer, storageConformance } from '@berth/core/testing';
import descriptor from '../src/index.ts';

const s3 = await startS3TestServer(t, ['berth-backups']);
const location = { provider: 'Minio', endpoint: s3.endpoint, region: s3.region, bucket: 'berth-backups', accessKey: s3.accessKey, secretAccessKey: s3.secretAccessKey };

storageConformance(t, descriptor, {
  options: { partSizeMiB: 5 },
  location,
  largeBytes: 12 * 1024 * 1024,
  failing: [
    { location: { ...location, accessKey: 'NOT-A-KEY' }, failure: 'auth' },
    { location: { ...location, bucket: 'no-such-bucket' }, failure: 'bucket' },
    { location: { ...location, endpoint: 'http://127.0.0.1:1' }, failure: 'endpoint' },
  ],
});

t.test('an endpoint that is not a URL is refused, naming the field', async t => {
  const storage = await descriptor.create({ partSizeMiB: 8, queueSize: 2, forcePathStyle: true }, { config: {} as never });
  t.equal(storage.validate({ ...location, endpoint: 'not a url' })?.field, 'endpoint');
});
