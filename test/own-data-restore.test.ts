// Berth's own data: the encrypted archive (database dump + data-directory keys) of a running
// instance, restored by `berth restore` into a NEW data directory (a real embedded PostgreSQL is
// created there), then a Berth started on it lists the project and opens its sealed env.
import t from 'tap';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PassThrough } from 'node:stream';
import { createKernel } from '@berth/core';
import { startTestServer, signUpAdmin, Client } from '@berth/core/testing';
import { writeOwnDataArchive } from '../core/src/own-data/archive.ts';
import { restoreCommand } from '../core/src/own-data/restore.ts';

const PASSPHRASE = 'correct horse battery staple 42';

t.test('backup of Berth\'s own data, restored into a new data directory', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  const { client, apiKey } = await signUpAdmin(server);
  const created = await client.post('project.create', { name: 'Shop', env: 'TOKEN=s3cret' });
  t.equal(created.status, 200);
  t.ok(existsSync(path.join(server.dataDir, 'secret.key')), 'the instance seals with dataDir/secret.key');

  const scratch = mkdtempSync(path.join(os.tmpdir(), 'berth-own-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const file = path.join(scratch, 'berth.archive.enc');
  const pass = new PassThrough();
  const written = pipeline(pass, createWriteStream(file));
  await writeOwnDataArchive(server.kernel.database.pool, server.dataDir, PASSPHRASE, pass);
  await written;
  const bytes = readFileSync(file);
  t.ok(bytes.length > 1000, 'the archive holds the dump');
  t.notOk(bytes.includes(readFileSync(path.join(server.dataDir, 'secret.key')).subarray(0, 20)), 'the sealing key is not in the archive in clear');
  t.notOk(bytes.includes(Buffer.from('CREATE TABLE')), 'the dump is not in the archive in clear');

  t.test('a wrong passphrase is refused and nothing is written', async t => {
    const target = path.join(scratch, 'wrong');
    await t.rejects(restoreCommand(['--from', file, '--passphrase-env', 'P', '--data-dir', target], { P: 'not the passphrase at all' }), /could not be decrypted: the encryption key is wrong/);
    t.notOk(existsSync(target), 'no data directory was made');
  });

  t.test('a non-empty target is refused', async t => {
    await t.rejects(restoreCommand(['--from', file, '--passphrase-env', 'P', '--data-dir', server.dataDir], { P: PASSPHRASE }), /is not empty/);
  });

  t.test('restore into a new data directory, then start Berth there', async t => {
    // Short: the embedded server's socket lives in it.
    const target = mkdtempSync(path.join(os.tmpdir(), 'berth-r-'));
    rmSync(target, { recursive: true });
    t.teardown(() => rmSync(target, { recursive: true, force: true }));
    await restoreCommand(['--from', file, '--passphrase-env', 'P', '--data-dir', target], { P: PASSPHRASE });
    t.same(readFileSync(path.join(target, 'secret.key')), readFileSync(path.join(server.dataDir, 'secret.key')), 'the sealing key is back');
    const kernel = await createKernel({ env: {}, config: { port: 0, host: '127.0.0.1', dataDir: target, logLevel: 'silent', jobs: false } });
    t.teardown(() => kernel.stop());
    t.ok(kernel.embedded, 'the restored instance runs on its embedded database');
    const url = await kernel.listen();
    const restored = new Client(url, { apiKey });
    const all = await restored.get('project.all', {});
    t.equal(all.status, 200, 'the admin\'s API key (restored) is accepted');
    const shop = (all.body as Array<Record<string, unknown>>).find(p => p.name === 'Shop');
    t.ok(shop, 'the project is listed');
    const one = await restored.get('project.one', { projectId: created.body.project.projectId });
    t.equal(one.body.env, 'TOKEN=s3cret', 'the sealed env opens with the restored key');
  });
});
