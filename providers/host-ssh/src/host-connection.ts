// What the hosts plugin asks of one server, whatever reaches it (this machine, SSH, a third
// party's transport). A draft of core/src/contracts/host-provider.ts: it moves there, unchanged,
// when the hosts plugin is made (issue #28), and SshHost then implements the contract from core.
import type Docker from 'dockerode';

/** Options of one command. */
export interface RunOptions {
  /** Written to the command's standard input, which is then closed. */
  stdin?: string | Buffer;
  /** Aborting ends the command (SIGKILL where the host allows signals) and rejects with the reason. */
  signal?: AbortSignal;
}

/** What a command answered. */
export interface RunResult {
  /** Its exit status; null when a signal ended it. */
  code: number | null;
  /** The signal that ended it (e.g. "SIGKILL"), else null. */
  signal: string | null;
  /** Its standard output (UTF-8). */
  stdout: string;
  /** Its standard error (UTF-8). */
  stderr: string;
}

/** One server's Docker engine and command runner. */
export interface HostConnection {
  /** dockerode for the server's engine; rejects when the server cannot be reached or its identity changed. */
  engine(): Promise<Docker>;
  /** Runs argv on the server: an argument array, never a shell string; a non-zero exit is an answer, not an error. */
  run(argv: readonly string[], options?: RunOptions): Promise<RunResult>;
  /** Releases what the connection holds; later calls fail. */
  close(): Promise<void>;
}
