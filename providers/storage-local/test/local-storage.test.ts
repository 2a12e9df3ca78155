import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { storageConformance } from '@berth/core/testing';
import descriptor from '../src/index.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'berth-local-storage-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const location = { provider: 'local', endpoint: '', region: '', bucket: 'nightly', accessKey: '', secretAccessKey: '' };

storageConformance(t, descriptor, { options: { root }, location, largeBytes: 3 * 1024 * 1024 });

t.test('a bucket that would leave the root is refused, naming the field', async t => {
  const storage = await descriptor.create({ root }, { config: {} as never });
  t.same(storage.validate({ ...location, bucket: '../etc' }), { field: 'bucket', message: storage.validate({ ...location, bucket: '../etc' })!.message });
  t.throws(() => storage.open({ ...location, bucket: '../etc' }), { name: 'StorageError', failure: 'bucket' } as never);
  t.ok(statSync(path.join(root, 'nightly')).isDirectory(), 'the destination directory was made below the root');
});
