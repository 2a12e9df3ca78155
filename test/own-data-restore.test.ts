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
import { writeOwnDataArchive } from '../plugins/backups/src/own-data/archive.ts';
import { runPluginCommand } from '@berth/core';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

/** `berth restore`, the backups plugin's command, run as the operator command runs it (no HTTP server; it opens the database itself). */
async function restoreCommand(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  if (!(await runPluginCommand('restore', args, env))) throw new Error('no enabled plugin has the command restore');
}

const PASSPHRASE = 'correct horse battery staple 42';

t.test("backup of Berth's own data, restored into a new data directory", async t => {
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
    // The operator command itself, as a process of its own: no Berth serves the target, the command opens its database.
    const restored = await promisify(execFile)(process.execPath, [...nodeFlags, cli, 'restore', '--from', file, '--passphrase-env', 'P', '--data-dir', target], {
      env: { PATH: process.env.PATH, P: PASSPHRASE, BERTH_CONFIG: '' },
      cwd: repoRoot,
    });
    t.match(restored.stdout, `restored into ${target}`);
    t.same(readFileSync(path.join(target, 'secret.key')), readFileSync(path.join(server.dataDir, 'secret.key')), 'the sealing key is back');
    const kernel = await createKernel({ env: {}, config: { port: 0, host: '127.0.0.1', dataDir: target, logLevel: 'silent', jobs: false } });
    t.teardown(() => kernel.stop());
    t.ok(kernel.embedded, 'the restored instance runs on its embedded database');
    const url = await kernel.listen();
    const client = new Client(url, { apiKey });
    const all = await client.get('project.all', {});
    t.equal(all.status, 200, "the admin's API key (restored) is accepted");
    const shop = (all.body as Array<Record<string, unknown>>).find(p => p.name === 'Shop');
    t.ok(shop, 'the project is listed');
    const one = await client.get('project.one', { projectId: created.body.project.projectId });
    t.equal(one.body.env, 'TOKEN=s3cret', 'the sealed env opens with the restored key');
  });
});
