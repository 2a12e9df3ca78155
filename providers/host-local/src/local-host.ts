// The machine Berth runs on: its engine through dockerode (DOCKER_HOST, else the default socket),
// its programs spawned straight from the argument array (no shell, so nothing is read as syntax).
// dockerode is imported on the first engine() call: a control plane that deploys nothing never loads it.
import { spawn } from 'node:child_process';
import type Docker from 'dockerode';
import { unavailable, type HostConnection, type HostProvider, type HostServer, type RunOptions, type RunResult } from '@berth/core';

/** This machine's engine and programs. */
export class LocalHost implements HostConnection {
  #engine: Promise<Docker> | undefined;
  #closed = false;

  /** dockerode for the local engine, answered once the engine answers a ping (a failed attempt is retried on the next call). */
  engine(): Promise<Docker> {
    if (this.#closed) return Promise.reject(this.#closedError());
    this.#engine ??= this.#reach().catch(e => {
      this.#engine = undefined;
      throw e;
    });
    return this.#engine;
  }

  /** Spawns argv[0] with the rest as its arguments; a program that does not exist answers 127, as a shell would. */
  run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    if (this.#closed) return Promise.reject(this.#closedError());
    if (!argv.length) return Promise.reject(new Error('host.local: run needs a program'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const [program, ...args] = argv as [string, ...string[]];
    return new Promise<RunResult>((resolve, reject) => {
      const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [],
        err: Buffer[] = [];
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const onAbort = () => {
        child.kill('SIGKILL');
        settle(() => reject(signal!.reason));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      // A program that exits without reading its stdin closes the pipe under the writer.
      child.stdin.on('error', () => {});
      child.on('error', (e: NodeJS.ErrnoException) =>
        settle(() => {
          if (e.code === 'ENOENT') resolve({ code: 127, signal: null, stdout: '', stderr: `${program}: not found\n` });
          else reject(unavailable(`host.local: cannot run ${program}: ${e.code ?? e.message}`));
        }),
      );
      child.on('close', (code, sig) => settle(() => resolve({ code, signal: sig, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') })));
      child.stdin.end(options.stdin);
    });
  }

  /** Later calls fail; dockerode holds no connection between requests, so nothing else is released. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#engine = undefined;
  }

  async #reach(): Promise<Docker> {
    const { default: Dockerode } = await import('dockerode');
    const docker = new Dockerode();
    try {
      await docker.ping();
    } catch (e) {
      const where = process.env.DOCKER_HOST || '/var/run/docker.sock';
      throw unavailable(`host.local: the Docker engine at ${where} does not answer (${(e as { code?: string }).code ?? (e as Error).message})`);
    }
    return docker;
  }

  #closedError() {
    return unavailable('host.local: the connection was closed');
  }
}

/** Reaches this machine only: connect(null). */
export class LocalHostProvider implements HostProvider {
  readonly id = 'local';

  async connect(server: HostServer | null): Promise<HostConnection> {
    if (server) throw new Error(`host.local reaches only the machine Berth runs on, not server ${server.serverId} (${server.ipAddress})`);
    return new LocalHost();
  }
}
