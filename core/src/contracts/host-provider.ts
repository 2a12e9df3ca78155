// How Berth reaches a machine that runs workloads: this one, or a server of the `server.*`
// records. A host provider turns a server (or null, this machine) into a HostConnection: that
// machine's Docker engine and a command runner. The hosts plugin keeps one connection per server
// and answers it as `hosts.of(serverId | null)`; nothing above it reaches a host otherwise.
// Built in: `host.local` (this machine's engine, programs run directly) and `host.ssh` (one pooled,
// pinned ssh2 connection per server). A new transport is a provider:
// `export default defineProvider({ contract: 'host', id, options, create: o => new MyHosts(o) })`,
// and its test calls `hostConformance` from @berth/core/testing.
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';

/** Options of one command. */
export interface RunOptions {
  /** Written to the command's standard input, which is then closed (absent: an empty, closed stdin). */
  stdin?: string | Buffer;
  /** Aborting ends the command (SIGKILL where the host allows signals) and rejects with the reason. */
  signal?: AbortSignal;
}

/** What a command answered. */
export interface RunResult {
  /** Its exit status (127: the program does not exist); null when a signal ended it. */
  code: number | null;
  /** The signal that ended it (e.g. "SIGKILL"), else null. */
  signal: string | null;
  /** Its standard output (UTF-8). */
  stdout: string;
  /** Its standard error (UTF-8). */
  stderr: string;
}

/** One machine's Docker engine and command runner. */
export interface HostConnection {
  /** dockerode for the machine's engine; rejects (a domain error) when the machine cannot be reached or its identity changed. */
  engine(): Promise<Docker>;
  /** Runs argv on the machine: an argument array, never a shell string; a non-zero exit is an answer, not an error. */
  run(argv: readonly string[], options?: RunOptions): Promise<RunResult>;
  /**
   * One raw byte stream to the machine's engine API (what the Docker CLI speaks over its socket),
   * for programs run on this machine against that engine (compose, stack deploy). Absent for this
   * machine's own engine, whose socket programs reach directly.
   */
  dialEngine?(): Promise<Duplex>;
  /** Releases what the connection holds; later calls fail. */
  close(): Promise<void>;
}

/** A server as its record describes it: where it is, who logs in, which key, which host key is pinned. */
export interface HostServer {
  /** The server record's id (messages name it). */
  serverId: string;
  /** Its address: an IP or a DNS name. */
  ipAddress: string;
  /** Its SSH port. */
  port: number;
  /** The login (root, or a user in the docker group). */
  username: string;
  /** The private key of its `sshKey` record, decrypted and held in memory only; null when the record has no key. */
  privateKey: string | null;
  /** The pinned host key fingerprint (OpenSSH's `SHA256:…`); null pins the first key the server presents. */
  hostKeyFingerprint: string | null;
  /** Called once when a key is pinned on first use, with its fingerprint, for the record to store. */
  onHostKeyPinned?: (fingerprint: string) => void;
}

export interface HostProvider {
  /** The provider's id (`local`, `ssh`): which machines it reaches. */
  readonly id: string;
  /**
   * A connection to `server`, or to the machine Berth runs on for null. It makes no contact yet:
   * the first engine() or run() does, and fails with the reason. A server this provider cannot
   * reach (null for a remote-only provider, a server for `local`) is refused here, naming it.
   */
  connect(server: HostServer | null): Promise<HostConnection>;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `host.<id>`: a way to reach a machine's engine and run its programs; the hosts plugin keeps the connections. */
    host: HostProvider;
  }
}
