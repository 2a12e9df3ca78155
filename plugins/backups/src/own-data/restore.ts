// berth restore, the backups plugin's operator command: brings an instance back from the archive of
// its own data (own-data/archive.ts), with Berth stopped,
// into a NEW data directory (the embedded database is created there) or an empty external
// DATABASE_URL. The archive (a file, or an object of an S3-compatible bucket) is decrypted and
// checked whole before anything is written.
import { createReadStream, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { CommandContext, Kernel, PluginCommand } from '@berth/core';
import { decryptStream } from '../stream-encryption.ts';
import { DATABASE_ENTRY, KEY_FILES, readEntries } from './archive.ts';
import { runPgTool } from './pg-tools.ts';

const usage = `berth restore --from <archive file> --passphrase-env <VAR> --data-dir <new directory>
  berth restore --from s3://<bucket>/<key> --endpoint <URL> [--region <region>] --passphrase-env <VAR> --data-dir <new directory>
    (the bucket's keys from the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)`;

/** The archive's bytes: a file, or an object of an S3-compatible bucket read through the s3 storage provider (the instance being restored has no destinations to read). */
async function openArchive(from: string, o: { endpoint?: string; region?: string }, { env, provider }: CommandContext): Promise<Readable> {
  const s3 = /^s3:\/\/([^/]+)\/(.+)$/.exec(from);
  if (!s3) {
    if (/^[a-z0-9]+:\/\//i.test(from)) throw new Error(`--from ${from}: a file path or s3://<bucket>/<key>`);
    return createReadStream(from);
  }
  if (!o.endpoint) throw new Error("--endpoint is required with --from s3://… (the S3-compatible service's URL)");
  const accessKey = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKey || !secretAccessKey) throw new Error("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (the bucket's keys) with --from s3://…");
  const storage = await provider('storage', 's3');
  return storage.open({ provider: 's3', endpoint: o.endpoint, region: o.region ?? 'us-east-1', bucket: s3[1]!, accessKey, secretAccessKey }).get(s3[2]!);
}

async function decryptArchive(from: string, input: () => Promise<Readable>, passphrase: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _e, done) {
      parts.push(chunk);
      done();
    },
  });
  try {
    await pipeline(await input(), decryptStream(passphrase), collect);
  } catch (e) {
    throw new Error(`${from} could not be decrypted: ${(e as Error).message}; nothing was written`);
  }
  return Buffer.concat(parts);
}

async function externalIsEmpty(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("select count(*) as n from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')");
    return Number(rows[0]!.n) === 0;
  } finally {
    await client.end();
  }
}

async function restore(args: string[], context: CommandContext): Promise<void> {
  const { env } = context;
  const { values } = parseArgs({
    args,
    options: { from: { type: 'string' }, 'passphrase-env': { type: 'string' }, 'data-dir': { type: 'string' }, endpoint: { type: 'string' }, region: { type: 'string' } },
  });
  if (!values.from || !values['passphrase-env'] || !values['data-dir']) throw new Error(`--from, --passphrase-env and --data-dir are required\nusage: ${usage}`);
  const passphrase = env[values['passphrase-env']];
  if (!passphrase) throw new Error(`the environment variable ${values['passphrase-env']} (--passphrase-env) is not set`);
  const dataDir = path.resolve(values['data-dir']);
  if (existsSync(dataDir) && readdirSync(dataDir).length) throw new Error(`${dataDir} is not empty: restore into a new data directory`);
  if (env.DATABASE_URL && !(await externalIsEmpty(env.DATABASE_URL))) throw new Error('the database of DATABASE_URL is not empty: restore into an empty database');
  const from = values.from;
  const entries = readEntries(await decryptArchive(from, () => openArchive(from, values, context), passphrase));
  const dump = entries.get(DATABASE_ENTRY);
  if (!dump?.length) throw new Error(`${values.from} holds no database dump`);
  const created = !existsSync(dataDir);
  let kernel: Kernel | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    for (const file of KEY_FILES) {
      const key = entries.get(file);
      if (key) writeFileSync(path.join(dataDir, file), key, { mode: 0o600, flag: 'wx' });
    }
    // Opening the kernel creates the database (initdb for the embedded one) and its schema; the
    // dump (made with --clean) then replaces every table with the archived one.
    kernel = await context.openKernel({ env: { ...env, BERTH_DATA_DIR: dataDir }, config: { dataDir } });
    await runPgTool('psql', ['--no-psqlrc', '--quiet', '--single-transaction', '-v', 'ON_ERROR_STOP=1', '--file=-'], kernel.database.pool, { stdin: Readable.from([dump]) });
    context.out(`restored into ${env.DATABASE_URL ? 'the database of DATABASE_URL' : dataDir}; start Berth with BERTH_DATA_DIR=${dataDir}\n`);
  } catch (e) {
    await kernel?.stop().catch(() => {});
    kernel = undefined;
    if (created) rmSync(dataDir, { recursive: true, force: true });
    else for (const f of readdirSync(dataDir)) rmSync(path.join(dataDir, f), { recursive: true, force: true });
    throw e;
  } finally {
    await kernel?.stop();
  }
}

export const restoreCommand: PluginCommand = { name: 'restore', usage, run: restore };
