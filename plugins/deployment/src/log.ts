// A deployment's log on disk: appended line by line while the job runs, every registered
// secret and every swarm join token masked before a byte is written (core's OutputFilter).
// Readers (readLogs, the live stream) read the file.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { MIN_REGISTERED_SECRET_LENGTH, OutputFilter, SECRET_MASK } from '@berth/core';

export const MASK = SECRET_MASK;
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Where deployment logs live under the data directory. */
export const logDirectory = (dataDir: string) => path.join(dataDir, 'logs', 'deployments');

/** The log file of one deployment; the id is checked, since it becomes a path. */
export function logPathFor(dataDir: string, deploymentId: string): string {
  if (!ID_PATTERN.test(deploymentId)) throw new Error(`Invalid deployment id for a log path: ${JSON.stringify(deploymentId)}`);
  return path.join(logDirectory(dataDir), `${deploymentId}.log`);
}

/**
 * Core's output filter (swarm join tokens cut whatever wrote them), with the values a deployer
 * registers as secrets masked from 3 characters on (longest first, so a secret containing another
 * is masked whole).
 */
export class Redactor extends OutputFilter {
  override add(secret: string | null | undefined): this {
    return super.add(secret, MIN_REGISTERED_SECRET_LENGTH);
  }
}

export class DeploymentLog {
  readonly redactor = new Redactor();
  readonly #stream: WriteStream;
  #closed = false;

  constructor(file: string) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.#stream = createWriteStream(file, { flags: 'a', mode: 0o600 });
    // A full disk must not crash the platform; the deployment itself reports what failed.
    this.#stream.on('error', () => {});
  }

  /** Appends the text as lines (redacted); a closed log ignores late writes of an aborted job. */
  write(text: string): void {
    if (this.#closed) return;
    const lines = this.redactor.apply(String(text)).replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
    this.#stream.write(`${lines.join('\n')}\n`);
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    return new Promise(resolve => this.#stream.end(() => resolve()));
  }
}

const CHUNK = 64 * 1024;
/** The most a follower reads at once; the rest comes on the next read. */
const MAX_READ = 1024 * 1024;

/** The last `tail` lines of a log, read from its end (logs of long builds are large); empty when there is no file yet. */
export async function readTail(file: string, tail: number): Promise<string> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw e;
  }
  try {
    const { size } = await handle.stat();
    let start = size;
    let data = Buffer.alloc(0);
    // One newline more than lines wanted (the file ends with one), or the whole file.
    while (start > 0 && count(data, 10) <= tail) {
      const from = Math.max(0, start - CHUNK);
      const buf = Buffer.alloc(start - from);
      await handle.read(buf, 0, buf.length, from);
      data = Buffer.concat([buf, data]);
      start = from;
    }
    const lines = data.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    // When the read stopped inside the file, its first line is cut: drop it.
    const whole = start === 0 ? lines : lines.slice(1);
    const kept = whole.slice(-tail);
    return kept.length ? `${kept.join('\n')}\n` : '';
  } finally {
    await handle.close();
  }
}

const count = (buf: Buffer, byte: number) => {
  let n = 0;
  for (let i = buf.indexOf(byte); i !== -1; i = buf.indexOf(byte, i + 1)) n++;
  return n;
};

/** Bytes of the file from `offset` on, at most MAX_READ (for followers); empty when there is no file yet. */
export async function readFrom(file: string, offset: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw e;
  }
  try {
    const { size } = await handle.stat();
    if (size <= offset) return Buffer.alloc(0);
    const buf = Buffer.alloc(Math.min(size - offset, MAX_READ));
    const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export const removeLog = (file: string) => rm(file, { force: true });
