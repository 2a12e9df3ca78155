// Dump, restore and the restore check of one database running in a given container, through its
// driver's commands (argument arrays, credentials in the exec environment): the one path for the
// database kinds' tasks and for a database in a service of someone else's stack (compose).
import type Docker from 'dockerode';
import path from 'node:path';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ContainerCommand, DatabaseCredentials, DatabaseDriver } from '@berth/core';
import { execIn, execStream, startIn, type StreamIo } from '../swarm/exec.ts';

const READY_TIMEOUT_MS = 180_000;

/** One database in one container: the engine, the container (null = not running), the kind's driver and the credentials. */
export interface DatabaseInContainer {
  docker: Docker;
  containerId: string | null;
  driver: DatabaseDriver;
  creds: DatabaseCredentials;
  /** What the messages call it (the service's name). */
  name: string;
}

export interface ContainerBackupIo {
  signal?: AbortSignal;
  log?(line: string): void;
}

/** Holds back the last `bytes` of a stream and drops them at its end when they match `pattern`. */
function dropTrailer({ bytes, pattern }: { bytes: number; pattern: RegExp }): Transform {
  let tail = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _e, done) {
      const all = Buffer.concat([tail, chunk]);
      tail = all.subarray(Math.max(0, all.length - bytes));
      done(null, all.subarray(0, Math.max(0, all.length - bytes)));
    },
    flush(done) {
      done(null, tail.length === bytes && pattern.test(tail.toString('latin1')) ? null : tail);
    },
  });
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    // An 'abort' listener added after the abort never fires: a cancelled run would sleep on.
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason ?? new Error('aborted'));
      },
      { once: true },
    );
  });

const lastLines = (text: string, n: number) => text.trim().split('\n').slice(-n).join(' / ');

/** Runs one of the driver's programs in the container with streamed input/output; a failure names the program and fails the output stream too. */
async function streamIn(db: DatabaseInContainer, command: ContainerCommand, io: StreamIo, what: string): Promise<void> {
  if (!db.containerId) {
    io.stdout?.destroy(new Error(`${db.name} is not running`));
    throw new Error(`${db.name} is not running: start it before a ${what}`);
  }
  const result = await execStream(db.docker, db.containerId, command, io);
  if (result.exitCode !== 0) {
    const error = new Error(`The ${db.driver.label} ${what} program failed (exit code ${result.exitCode}): ${lastLines(result.stderr, 3) || `exit code ${result.exitCode}`}`);
    // The consumer (gzip, the upload) must see a failed stream, never a complete one.
    io.stdout?.destroy(error);
    throw error;
  }
}

/** The credentials aimed at `databaseName` (null = the credentials' own database). */
export const towards = (creds: DatabaseCredentials, databaseName: string | null): DatabaseCredentials => ({ ...creds, ...(databaseName ? { databaseName } : {}) });

/** Streams the driver's dump of `databaseName` (or the credentials' own) into `out`, which it ends. */
export async function dumpIn(db: DatabaseInContainer, databaseName: string | null, out: Writable, io: ContainerBackupIo): Promise<void> {
  const command = db.driver.dumpCommand(towards(db.creds, databaseName));
  const trailer = db.driver.dumpTrailer;
  if (!trailer) return streamIn(db, command, { stdout: out, signal: io.signal }, 'dump');
  const trimmed = dropTrailer(trailer);
  const piped = pipeline(trimmed, out).catch(() => {});
  await streamIn(db, command, { stdout: trimmed, signal: io.signal }, 'dump');
  await piped;
}

/** Creates `databaseName` when the driver can and it differs from the credentials' own (a restore into a new database); a no-op when it exists. */
async function ensureDatabase(db: DatabaseInContainer, databaseName: string | null, io: ContainerBackupIo): Promise<void> {
  if (!databaseName || databaseName === db.creds.databaseName || !db.driver.createDatabaseCommand || !db.containerId) return;
  const result = await execIn(db.docker, db.containerId, db.driver.createDatabaseCommand(towards(db.creds, databaseName)), { signal: io.signal });
  if (result.exitCode !== 0) throw new Error(`The database ${databaseName} could not be created: ${lastLines(result.stderr || result.stdout, 2) || `exit code ${result.exitCode}`}`);
  io.log?.(`The database ${databaseName} is there (created when it was not)`);
}

/** Feeds `input` to the driver's restore program for `databaseName` (created first when new). */
export async function restoreIn(db: DatabaseInContainer, databaseName: string | null, input: Readable, io: ContainerBackupIo): Promise<void> {
  await ensureDatabase(db, databaseName, io);
  await streamIn(db, db.driver.restoreCommand(towards(db.creds, databaseName)), { stdin: input, signal: io.signal }, 'restore');
}

/**
 * Waits until the driver's readiness check passes in the container; rejects with its last answer
 * after the timeout, or at once when `gone` answers why the server is no longer there.
 */
export async function waitReady(db: DatabaseInContainer & { containerId: string }, io: ContainerBackupIo, gone: () => string | null = () => null): Promise<void> {
  const check = db.driver.readinessCheck(db.creds);
  const until = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < until) {
    io.signal?.throwIfAborted();
    const r = await execIn(db.docker, db.containerId, check, { signal: io.signal }).catch(e => ({ exitCode: -1, stdout: '', stderr: (e as Error).message }));
    if (r.exitCode === 0 && (!check.expectOutput || check.expectOutput.test(r.stdout))) return;
    const why = gone();
    if (why) throw new Error(why);
    last = lastLines(r.stderr || r.stdout, 1);
    await sleep(500, io.signal);
  }
  throw new Error(`${db.name} did not become ready within ${READY_TIMEOUT_MS / 1000} s${last ? `: ${last}` : ''}`);
}

/** Runs one program (argument array) as root beside the data path, with its stdin when given; throws unless it exits 0. */
export type RootRun = (cmd: string[], stdin?: Readable) => Promise<void>;

type OfflineRestore = NonNullable<DatabaseDriver['offlineRestore']>;

/** Runs the cleanup of a failed step (best effort: the helper may be gone) and rethrows its error. */
const failedStep = async (run: RootRun, leftovers: string[], e: unknown): Promise<never> => {
  await run(['rm', '-rf', '--', ...leftovers]).catch(() => {});
  throw e;
};

/**
 * Unpacks the archive `incoming` and swaps its `file` tree in for the current one. No step loses the
 * current files: they are moved aside (never deleted) until the new tree is in their place, and moved
 * back when it cannot be; whatever fails, the unpacked copy and the archive (backup-sized) are removed.
 */
async function swapInTar(run: RootRun, offline: OfflineRestore, at: (p: string) => string, incoming: string): Promise<void> {
  const unpacked = at('.berth-unpack');
  const previous = at('.berth-previous');
  const data = at(offline.file);
  const leftovers = [unpacked, incoming];
  try {
    // Unpacked beside the data first (an archive tar refuses leaves the current files as they were); only
    // its `file` tree, below the data path: GNU tar drops a leading "/" and refuses members with "..".
    await run(['rm', '-rf', '--', unpacked]);
    await run(['mkdir', '--', unpacked]);
    await run(['tar', '-x', '-f', incoming, '-C', unpacked, '--no-same-owner', '--', offline.file]);
    // Made when absent (a fresh volume), so the move aside needs no test. -T: onto `previous` itself,
    // never into it; a `previous` an interrupted restore left holding data is not replaced (mv fails).
    await run(['mkdir', '-p', '--', data]);
  } catch (e) {
    return failedStep(run, leftovers, e);
  }
  await run(['mv', '-T', '--', data, previous]).catch(e =>
    failedStep(run, leftovers, new Error(`the current ${offline.file} could not be set aside (${previous} may hold an earlier restore's; move it back or remove it): ${(e as Error).message}`)),
  );
  try {
    await run(['mv', '-T', '--', path.posix.join(unpacked, offline.file), data]);
  } catch (e) {
    const back = await run(['mv', '-T', '--', previous, data]).then(
      () => 'the current files are back in place',
      (again: Error) => `the current files stay in ${previous}: ${again.message}`,
    );
    return failedStep(run, leftovers, new Error(`${(e as Error).message} (${back})`));
  }
  await run(['rm', '-rf', '--', ...offline.remove.filter(r => r !== offline.file).map(at), previous, ...leftovers]).catch(e => {
    throw new Error(`${offline.file} is restored, but what it replaced could not be removed (${previous}): ${(e as Error).message}`);
  });
}

/**
 * Writes a dump as the driver's offlineRestore files below its data path through `run`, for a
 * server that is not running: the dump arrives beside the data first (a failed transfer leaves
 * the current files as they were), then replaces them; everything ends up owned like the data path.
 */
export async function writeOfflineFiles(run: RootRun, driver: DatabaseDriver, input: Readable): Promise<void> {
  const offline = driver.offlineRestore;
  if (!offline) throw new Error(`${driver.label} restores into its running server, not into its data files`);
  const at = (p: string) => path.posix.join(driver.dataPath, p);
  const incoming = at('.berth-restore');
  // A transfer cut short must not leave its part in the volume.
  await run(['dd', `of=${incoming}`, 'bs=1M', 'status=none'], input).catch(e => failedStep(run, [incoming], e));
  if (offline.archive === 'tar') {
    await swapInTar(run, offline, at, incoming);
  } else {
    await run(['rm', '-rf', '--', ...offline.remove.map(at)]);
    await run(['mkdir', '-p', '--', path.posix.dirname(at(offline.file))]);
    await run(['mv', '-f', '--', incoming, at(offline.file)]);
  }
  for (const [file, content] of Object.entries(offline.files ?? {})) {
    await run(['mkdir', '-p', '--', path.posix.dirname(at(file))]);
    await run(['dd', `of=${at(file)}`, 'status=none'], Readable.from([Buffer.from(content)]));
  }
  await run(['chown', '-R', `--reference=${driver.dataPath}`, '--', driver.dataPath]);
}

/** The program and arguments the kind's container runs (the start command over the image's own, as the engine combines them). */
async function serverCommand(docker: Docker, image: string, start: { command: string | null; args: string[] | null }): Promise<{ cmd: string[]; user: string }> {
  const { Config } = await docker.getImage(image).inspect();
  const entrypoint = start.command ? [start.command] : [Config.Entrypoint ?? []].flat();
  const args = start.args ?? (start.command ? [] : [Config.Cmd ?? []].flat());
  return { cmd: [...entrypoint, ...args], user: Config.User ?? '' };
}

/**
 * Restores the dump into a throwaway container of `image` (no network, removed afterwards),
 * started as the kind starts it with these credentials, and answers the driver's inventory of
 * the copy ('' when the kind has none); rejects when the dump does not restore. A kind with
 * offlineRestore gets its files before the server starts: the container idles (as root, to write
 * them) and the server is then started inside it as the image's user.
 */
export async function verifyCopy(
  docker: Docker,
  o: { image: string; driver: DatabaseDriver; creds: DatabaseCredentials; record?: Record<string, unknown>; labels: Record<string, string>; name: string },
  databaseName: string | null,
  input: Readable,
  io: ContainerBackupIo,
): Promise<string> {
  const { driver, creds } = o;
  const start = driver.startCommand(creds, o.record);
  const container = await docker.createContainer({
    Image: o.image,
    Env: Object.entries(driver.containerEnv(creds, o.record)).map(([k, v]) => `${k}=${v}`),
    ...(driver.offlineRestore ? { Entrypoint: ['sleep', 'infinity'], Cmd: [], User: '0' } : { ...(start.command ? { Entrypoint: [start.command] } : {}), ...(start.args ? { Cmd: start.args } : {}) }),
    Labels: { ...o.labels, 'berth.helper': 'verify' },
    // No network: the copy is reached only through exec. Its host name must resolve without one
    // (readiness checks connect to the container's own host name, as in a service).
    Hostname: 'localhost',
    HostConfig: { NetworkMode: 'none' },
  });
  try {
    await container.start();
    const copy = { docker, containerId: container.id, driver, creds, name: `the throwaway ${driver.label} of ${o.name}` };
    const doesNotRestore = (e: Error) => {
      throw new Error(`the dump does not restore: ${e.message}`);
    };
    if (driver.offlineRestore) {
      const run: RootRun = async (cmd, stdin) => {
        const r = await execStream(docker, container.id, { cmd }, { stdin, signal: io.signal });
        if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed (exit code ${r.exitCode}): ${lastLines(r.stderr, 2)}`);
      };
      await writeOfflineFiles(run, driver, input).catch(doesNotRestore);
      const { exited } = await startIn(docker, container.id, await serverCommand(docker, o.image, start));
      let gone: string | null = null;
      void exited.then(r => {
        gone = `the ${driver.label} server stopped while loading it (exit code ${r.exitCode}): ${lastLines(r.output, 3)}`;
      });
      await waitReady(copy, io, () => gone).catch(doesNotRestore);
    } else {
      await waitReady(copy, io);
      await restoreIn(copy, databaseName, input, io).catch(doesNotRestore);
    }
    if (!driver.inventoryCommand) return '';
    const command = driver.inventoryCommand(towards(creds, databaseName));
    const inventory = await execIn(docker, container.id, command, { signal: io.signal });
    if (inventory.exitCode !== 0 || (command.expectOutput && !command.expectOutput.test(inventory.stdout))) {
      throw new Error(`the restored copy cannot be read: ${lastLines(inventory.stderr || inventory.stdout, 1)}`);
    }
    return (driver.inventoryLines ? driver.inventoryLines(inventory.stdout) : inventory.stdout).trim();
  } finally {
    await container.remove({ force: true, v: true }).catch(() => {});
  }
}
