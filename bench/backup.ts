#!/usr/bin/env node
// Backup and restore throughput for a postgres database of about 100 MB, through Berth's API
// (backup.manualBackupPostgres: dump → gzip → the destination → read back; restoreBackup: checked
// → gunzip → pg_restore), to a local directory and to a real S3 server (s3rver), beside
// `pg_dump | gzip > file` and `gunzip -c file | pg_restore` run by hand on the same container.
// The transfer rows run with backupVerify "never"; the last row restarts Berth with "always" (the
// default): the backup then also restores its file into a throwaway container and counts its rows.
// Runs Berth in-process as the tests do (needs BERTH_TEST_PG and the berth-test images).
//
//   node bench/backup.ts [--rows N]
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createWriteStream, createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pipeline } from 'node:stream/promises';
import Docker from 'dockerode';
import { Client, startTestServer, signUpAdmin, deploymentFinished, removeServiceAndVolume, TEST_POSTGRES_IMAGE, runFinished } from '@berth/core/testing';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '650000' } } });
const PASSWORD = 'Bench-pass_1';
const docker = new Docker();
const fakeT = { teardown: (fn: () => unknown) => void cleanups.push(fn) };
const cleanups: (() => unknown)[] = [];
const mb = (bytes: number) => bytes / 1024 / 1024;
const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const s = performance.now();
  const r = await fn();
  return [r, (performance.now() - s) / 1000];
};

async function main() {
  const { startS3TestServer } = await import('@berth/core/testing');
  const s3 = await startS3TestServer(fakeT as never, ['bench']);
  const server = await startTestServer({ deploySettleSeconds: 0, backupVerify: 'never' });
  cleanups.push(() => server.destroy());
  const admin = await signUpAdmin(server);
  let client = admin.client;
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Bench' });
  const created = (
    await client.post('postgres.create', {
      name: 'bench',
      environmentId: environment.environmentId,
      dockerImage: TEST_POSTGRES_IMAGE,
      databaseName: 'bench',
      databaseUser: 'bench',
      databasePassword: PASSWORD,
    })
  ).body;
  cleanups.push(() => removeServiceAndVolume(created.appName));
  const deployed = await runFinished(client, 'postgres.deploy', { postgresId: created.postgresId });
  if (deployed.status !== 'done') throw new Error(deployed.errorMessage);
  const [c] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${created.appName}`] } });
  const psql = async (sql: string) => {
    const { stdout } = await promisify(execFile)(
      'docker',
      ['exec', '-e', `PGPASSWORD=${PASSWORD}`, c!.Id, 'psql', '-h', '127.0.0.1', '-U', 'bench', '-d', 'bench', '-At', '-v', 'ON_ERROR_STOP=1', '-c', sql],
      { maxBuffer: 1 << 20 },
    );
    return stdout.trim();
  };
  await psql(
    `create table big as select g as id, md5(g::text) || md5((g * 7)::text) || md5((g * 13)::text) as payload, now() - g * interval '1 second' as at from generate_series(1, ${Number(values.rows)}) g; create index on big (at)`,
  );
  const size = Number(await psql(`select pg_database_size('bench')`));
  console.log(`database: ${mb(size).toFixed(1)} MB (pg_database_size), ${values.rows} rows`);
  const rows: string[][] = [];

  // By hand: pg_dump | gzip > file; gunzip -c file | pg_restore.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-bench-backup-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'bench.dump.gz');
  const [, dumpS] = await timed(async () => {
    const dump = spawn('docker', ['exec', '-e', `PGPASSWORD=${PASSWORD}`, c!.Id, 'pg_dump', '--format=custom', '-h', '127.0.0.1', '-U', 'bench', 'bench'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const gzip = spawn('gzip', ['-6'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await Promise.all([pipeline(dump.stdout, gzip.stdin), pipeline(gzip.stdout, createWriteStream(file))]);
  });
  const [, restoreS] = await timed(async () => {
    const restore = spawn('docker', ['exec', '-i', '-e', `PGPASSWORD=${PASSWORD}`, c!.Id, 'pg_restore', '--clean', '--if-exists', '--no-owner', '-h', '127.0.0.1', '-U', 'bench', '-d', 'bench'], {
      stdio: ['pipe', 'inherit', 'inherit'],
    });
    const gunzip = spawn('gunzip', ['-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await Promise.all([pipeline(createReadStream(file), gunzip.stdin), pipeline(gunzip.stdout, restore.stdin), new Promise(r => restore.on('close', r))]);
  });
  rows.push(['pg_dump \\| gzip > file (by hand)', mb(statSync(file).size).toFixed(1), dumpS.toFixed(1), (mb(size) / dumpS).toFixed(1), restoreS.toFixed(1), (mb(size) / restoreS).toFixed(1)]);

  const local = { name: 'disk', provider: 'local', bucket: 'bench', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null };
  for (const [label, destination, verify] of [
    ['Berth → local directory', local, false],
    [
      'Berth → S3 (s3rver)',
      { name: 's3', provider: 'Minio', bucket: 'bench', endpoint: s3.endpoint, region: s3.region, accessKey: s3.accessKey, secretAccessKey: s3.secretAccessKey, additionalFlags: [] },
      false,
    ],
    ['Berth → local directory, proven (backupVerify "always": + a throwaway restore and row count)', { ...local, name: 'disk-proven', bucket: 'bench-proven' }, true],
  ] as const) {
    if (verify) {
      const restarted = await server.restart({ deploySettleSeconds: 0, backupVerify: 'always' });
      client = new Client(restarted.url, { apiKey: admin.apiKey });
    }
    const dest = (await client.post('destination.create', destination)).body;
    const backup = (
      await client.post('backup.create', { schedule: '0 3 * * *', prefix: 'bench', destinationId: dest.destinationId, database: 'bench', databaseType: 'postgres', postgresId: created.postgresId })
    ).body;
    const [ran, backupS] = await timed(() => client.post('backup.manualBackupPostgres', { backupId: backup.backupId }));
    if (ran.body !== true) throw new Error(JSON.stringify(ran.body));
    const [f] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'bench/' })).body;
    if (verify && f.verified !== true) throw new Error(`the proven backup's file is not verified: ${JSON.stringify(f)}`);
    const [restored, restoreBerthS] = await timed(async () =>
      deploymentFinished(
        client,
        (await client.post('backup.restoreBackup', { databaseId: created.postgresId, databaseType: 'postgres', databaseName: 'bench', backupFile: f.Path, destinationId: dest.destinationId })).body
          .deploymentId,
        { timeout: 900_000 },
      ),
    );
    if (restored.status !== 'done') throw new Error(restored.errorMessage);
    rows.push([label, mb(f.Size).toFixed(1), backupS.toFixed(1), (mb(size) / backupS).toFixed(1), restoreBerthS.toFixed(1), (mb(size) / restoreBerthS).toFixed(1)]);
  }
  console.log('| path | file (MB) | backup (s) | backup (MB/s) | restore (s) | restore (MB/s) |\n|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

try {
  await main();
} finally {
  for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => {});
}
