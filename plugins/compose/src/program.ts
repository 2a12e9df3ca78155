// The Compose program and the Docker CLI, run with argument arrays (never a shell): `docker
// compose` when the CLI has the plugin, else Debian's `docker-compose`. Output goes to the
// deployment's log line by line; the run's signal stops the program's whole process group.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
let composeProgram: Promise<string[]> | undefined;

/** The Compose program's argv prefix on this host, found once. */
export function composeCommand(): Promise<string[]> {
  composeProgram ??= run('docker', ['compose', 'version'])
    .then(() => ['docker', 'compose'])
    .catch(() => run('docker-compose', ['version']).then(() => ['docker-compose']))
    .catch(() => {
      composeProgram = undefined;
      throw new Error("No Compose program on this host: install the docker compose plugin or Debian's docker-compose (scripts/services.sh does)");
    });
  return composeProgram;
}

export interface ProgramIo {
  cwd: string;
  /** Variables for the program's own environment (interpolation of the file), beside PATH and DOCKER_HOST. */
  env?: Record<string, string>;
  /** The engine the program drives (a server's forwarded socket); absent: this machine's (DOCKER_HOST as Berth has it). */
  dockerHost?: string;
  signal?: AbortSignal;
  log(line: string): void;
}

const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;

/** Runs argv; resolves on exit 0, rejects with the last output lines otherwise (or when aborted). */
export function runProgram(argv: string[], io: ProgramIo): Promise<void> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    if (io.signal?.aborted) return reject(new Error('The deployment was cancelled'));
    const env = {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: process.env.HOME ?? '/root',
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
      ...io.env,
      ...(io.dockerHost ? { DOCKER_HOST: io.dockerHost } : {}),
    };
    const child = spawn(file!, args, { cwd: io.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const tail: string[] = [];
    let pending = '';
    const onData = (chunk: Buffer) => {
      const parts = (pending + chunk.toString()).split(/\r\n|\r|\n/);
      pending = parts.pop() ?? '';
      for (const p of parts.map(l => l.replace(ANSI, '').trimEnd()).filter(Boolean)) {
        io.log(p);
        tail.push(p);
        if (tail.length > 5) tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const onAbort = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    };
    io.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', e => {
      io.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`${file} could not start: ${e.message}`));
    });
    child.on('close', code => {
      io.signal?.removeEventListener('abort', onAbort);
      if (pending.trim()) io.log(pending.replace(ANSI, '').trimEnd());
      if (io.signal?.aborted) return reject(new Error('The deployment was cancelled'));
      if (code === 0) return resolve();
      reject(new Error(`${argv.slice(0, 2).join(' ')} failed (exit ${code}): ${tail.join(' | ') || 'no output'}`));
    });
  });
}

/**
 * The engine's own prestart network hook (libnetwork-setkey) failing as a container starts. It is
 * the engine's work, not the file's: seen once in 17,000 tests (stop 63's CI, Docker 20.10,
 * "no such file or directory" from the hook) while other engines started and stopped beside it.
 */
const ENGINE_NETWORK_HOOK = /error running hook #\d+: error running hook/;

/**
 * runProgram for `up -d`, which is idempotent: when the engine's network hook fails, the same
 * command once more starts what the first run created. Any other failure, or a second one, stands.
 */
export async function runComposeUp(argv: string[], io: ProgramIo): Promise<void> {
  try {
    await runProgram(argv, io);
  } catch (e) {
    if (io.signal?.aborted || !ENGINE_NETWORK_HOOK.test((e as Error).message)) throw e;
    io.log("The engine's network hook failed while starting a container (the engine's fault, not the file's); running the command once more");
    await runProgram(argv, io);
  }
}
