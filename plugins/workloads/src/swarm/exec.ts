// Running a program inside a workload's running task (readiness checks, password changes,
// dumps): the engine's exec API with an argument array and its own environment — no shell.
import { Transform, Writable, type Duplex, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import { type ContainerCommand } from '@berth/core';
import { ownerLabels, type Owner } from '../owners.ts';

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the command in the container and collects its output (bounded to the last 64 KiB of each stream). */
export async function execIn(docker: Docker, containerId: string, command: ContainerCommand, options: { signal?: AbortSignal } = {}): Promise<ExecResult> {
  const container = docker.getContainer(containerId);
  const exec = await container.exec({ Cmd: command.cmd, Env: Object.entries(command.env ?? {}).map(([k, v]) => `${k}=${v}`), AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    // casts: demuxStream calls only write(); a whole Writable is not needed.
    const stdout = { write: (b: Buffer) => void out.push(b) } as unknown as NodeJS.WritableStream;
    const stderr = { write: (b: Buffer) => void err.push(b) } as unknown as NodeJS.WritableStream;
    docker.modem.demuxStream(stream, stdout, stderr);
    const abort = () => {
      stream.destroy();
      reject(options.signal?.reason ?? new Error('aborted'));
    };
    options.signal?.addEventListener('abort', abort, { once: true });
    stream.on('end', () => {
      options.signal?.removeEventListener('abort', abort);
      resolve();
    });
    stream.on('close', () => {
      options.signal?.removeEventListener('abort', abort);
      resolve();
    });
    stream.on('error', reject);
  });
  const info = await exec.inspect();
  const tail = (bufs: Buffer[]) => Buffer.concat(bufs).subarray(-65536).toString('utf8');
  return { exitCode: info.ExitCode ?? -1, stdout: tail(out), stderr: tail(err) };
}

/**
 * Starts a program that keeps running (a server) in the container as `user` (default: the
 * container's) without waiting for it; `exited` settles with its exit code and the last 4 KiB
 * of its output when it exits or the container goes.
 */
export async function startIn(docker: Docker, containerId: string, command: ContainerCommand & { user?: string }): Promise<{ exited: Promise<{ exitCode: number; output: string }> }> {
  const exec = await docker
    .getContainer(containerId)
    .exec({ Cmd: command.cmd, Env: Object.entries(command.env ?? {}).map(([k, v]) => `${k}=${v}`), ...(command.user ? { User: command.user } : {}), AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  let output = Buffer.alloc(0);
  // cast: demuxStream calls only write().
  const tail = { write: (b: Buffer) => void (output = Buffer.concat([output, b]).subarray(-4096)) } as unknown as NodeJS.WritableStream;
  docker.modem.demuxStream(stream, tail, tail);
  const exited = new Promise<{ exitCode: number; output: string }>(resolve => {
    const ended = () =>
      void exec
        .inspect()
        .then(
          info => info.ExitCode ?? -1,
          () => -1,
        )
        .then(exitCode => resolve({ exitCode, output: output.toString('utf8') }));
    stream.once('end', ended);
    stream.once('close', ended);
    stream.once('error', ended);
  });
  return { exited };
}

export interface StreamIo {
  /** Fed to the program's stdin, which is closed at its end. */
  stdin?: Readable;
  /** Receives the program's stdout as it comes (its backpressure slows the program down); ended when the program's output ends. */
  stdout?: Writable;
  signal?: AbortSignal;
}

/** Splits the engine's multiplexed exec stream (8-byte frame headers): stdout flows on, stderr is kept (its last 64 KiB). */
class Demux extends Transform {
  #pending: Buffer = Buffer.alloc(0);
  #stderr: Buffer[] = [];
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    let buf = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    while (buf.length >= 8) {
      const length = buf.readUInt32BE(4);
      if (buf.length < 8 + length) break;
      const payload = buf.subarray(8, 8 + length);
      if (buf[0] === 2) this.#stderr.push(payload);
      else this.push(payload);
      buf = buf.subarray(8 + length);
    }
    this.#pending = buf;
    done();
  }
  stderr(): string {
    return Buffer.concat(this.#stderr).subarray(-65536).toString('utf8');
  }
}

/** Runs the command with streamed stdin and stdout (dumps, restores): no copy in memory or on disk. */
export async function execStream(docker: Docker, containerId: string, command: ContainerCommand, io: StreamIo): Promise<{ exitCode: number; stderr: string }> {
  const exec = await docker
    .getContainer(containerId)
    .exec({ Cmd: command.cmd, Env: Object.entries(command.env ?? {}).map(([k, v]) => `${k}=${v}`), AttachStdin: io.stdin !== undefined, AttachStdout: true, AttachStderr: true });
  const socket = (await exec.start({ hijack: true, stdin: io.stdin !== undefined })) as Duplex;
  const demux = new Demux();
  const sink = io.stdout ?? new Writable({ write: (_c, _e, done) => done() });
  const abort = () => socket.destroy(io.signal?.reason ?? new Error('aborted'));
  io.signal?.addEventListener('abort', abort, { once: true });
  // An input that fails (a truncated or corrupted file) must fail the run even if the program
  // took what it got for a whole input: the connection is cut and the error thrown after.
  let inputError: Error | null = null;
  try {
    // Half-close once the input ends: the program sees its end and its output keeps flowing.
    const feeding = io.stdin
      ? pipeline(
          io.stdin,
          new Writable({
            write: (c, _e, done) => socket.write(c, done),
            final: done => {
              socket.end();
              done();
            },
          }),
        ).catch((e: Error) => {
          inputError = e;
          socket.destroy();
        })
      : Promise.resolve();
    await Promise.all([
      pipeline(socket, demux, sink).catch((e: Error) => {
        if (!inputError) throw e;
      }),
      feeding,
    ]);
  } finally {
    io.signal?.removeEventListener('abort', abort);
  }
  if (inputError) throw inputError;
  // The stream can end a moment before the engine records the exit code.
  let info = await exec.inspect();
  for (let i = 0; info.Running && i < 250; i++) {
    await new Promise(r => setTimeout(r, 20));
    info = await exec.inspect();
  }
  return { exitCode: info.ExitCode ?? -1, stderr: demux.stderr() };
}

export interface HelperOptions {
  /** A locally available image (the workload's own): nothing is pulled. */
  image: string;
  volume: string;
  mountPath: string;
  owner: Owner;
  stdin?: Readable;
  signal?: AbortSignal;
}

/** Runs one program in a throwaway container with the volume mounted (the service stopped), stdin streamed; removes the container; throws unless it exits 0. */
export async function runHelper(docker: Docker, o: HelperOptions, cmd: string[]): Promise<void> {
  const container = await docker.createContainer({
    Image: o.image,
    Entrypoint: [cmd[0]!],
    Cmd: cmd.slice(1),
    User: '0',
    OpenStdin: o.stdin !== undefined,
    StdinOnce: o.stdin !== undefined,
    AttachStdin: o.stdin !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Labels: { ...ownerLabels(o.owner), 'berth.helper': 'restore' },
    HostConfig: { Mounts: [{ Type: 'volume', Source: o.volume, Target: o.mountPath }], NetworkMode: 'none' },
  });
  try {
    const socket = (await container.attach({ stream: true, stdin: o.stdin !== undefined, stdout: true, stderr: true, hijack: true })) as Duplex;
    const demux = new Demux();
    const output = pipeline(socket, demux, new Writable({ write: (_c, _e, done) => done() })).catch(() => {});
    await container.start();
    const abort = () => void container.kill().catch(() => {});
    o.signal?.addEventListener('abort', abort, { once: true });
    try {
      if (o.stdin)
        await pipeline(
          o.stdin,
          new Writable({
            write: (c, _e, done) => socket.write(c, done),
            final: done => {
              socket.end();
              done();
            },
          }),
        );
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      await output;
      if (StatusCode !== 0) throw new Error(`${cmd[0]} in a helper container of ${o.image} exited with ${StatusCode}: ${demux.stderr().trim().split('\n').pop() ?? ''}`);
    } finally {
      o.signal?.removeEventListener('abort', abort);
    }
  } finally {
    await container.remove({ force: true }).catch(() => {});
  }
}
