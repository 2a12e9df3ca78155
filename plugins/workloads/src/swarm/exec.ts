// Running a program inside a workload's running task (readiness checks, password changes,
// dumps): the engine's exec API with an argument array and its own environment — no shell.
import type Docker from 'dockerode';
import { type ContainerCommand } from '@berth/core';

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the command in the container and collects its output (bounded to the last 64 KiB of each stream). */
export async function execIn(docker: Docker, containerId: string, command: ContainerCommand, options: { signal?: AbortSignal } = {}): Promise<ExecResult> {
  const container = docker.getContainer(containerId);
  const exec = await container.exec({
    Cmd: command.cmd,
    Env: Object.entries(command.env ?? {}).map(([k, v]) => `${k}=${v}`),
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({});
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    const stdout = { write: (b: Buffer) => void out.push(b) } as unknown as NodeJS.WritableStream;
    const stderr = { write: (b: Buffer) => void err.push(b) } as unknown as NodeJS.WritableStream;
    docker.modem.demuxStream(stream, stdout, stderr);
    const abort = () => { stream.destroy(); reject(options.signal?.reason ?? new Error('aborted')); };
    options.signal?.addEventListener('abort', abort, { once: true });
    stream.on('end', () => { options.signal?.removeEventListener('abort', abort); resolve(); });
    stream.on('close', () => { options.signal?.removeEventListener('abort', abort); resolve(); });
    stream.on('error', reject);
  });
  const info = await exec.inspect();
  const tail = (bufs: Buffer[]) => Buffer.concat(bufs).subarray(-65536).toString('utf8');
  return { exitCode: info.ExitCode ?? -1, stdout: tail(out), stderr: tail(err) };
}
