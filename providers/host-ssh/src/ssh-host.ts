// One remote server over SSH: a single ssh2 connection, opened on first use and again after it
// drops, shared by commands and by dockerode, with at most maxChannels channels open at once
// (more wait in line). The host key is pinned on first use (or checked against the fingerprint
// given up front); a changed key refuses every call. The private key lives only in memory.
import type { Duplex } from 'node:stream';
import Docker from 'dockerode';
import type { Client, ClientChannel } from 'ssh2';
import { unavailable, type HostConnection, type RunOptions, type RunResult } from '@berth/core';
import { ChannelAgent } from './engine-agent.ts';
import { HostKeyChangedError, hostKeyFingerprint } from './host-key.ts';
import { commandLine } from './shell-quote.ts';

/** How to reach one server. */
export interface SshHostOptions {
  /** The server's address (DNS name or IP). */
  host: string;
  /** Its SSH port (default 22). */
  port?: number;
  /** The login (root or a user in the docker group). */
  username: string;
  /** The private key (OpenSSH or PEM text), held in memory only. */
  privateKey: string | Buffer;
  /** The key's passphrase, when it has one. */
  passphrase?: string;
  /** The expected host key fingerprint (`SHA256:…`); absent or null pins the first key the server presents. */
  hostKeyFingerprint?: string | null;
  /** Called once when a key is pinned on first use, with its fingerprint (for the caller to store). */
  onHostKeyPinned?: (fingerprint: string) => void;
  /** Channels (commands, engine requests) open at once; more wait in line (default 8; OpenSSH allows 10 sessions per connection). */
  maxChannels?: number;
  /** Milliseconds between keepalive probes (default 15000); the connection counts as dropped after 3 unanswered. */
  keepaliveInterval?: number;
  /** Milliseconds allowed for connecting and logging in (default 20000). */
  readyTimeout?: number;
  /** How dockerode reaches the engine: a forward to its unix socket (default; measured faster) or `docker system dial-stdio`. */
  engineTransport?: 'stream-local' | 'dial-stdio';
  /** The engine's socket on the server, for stream-local (default /var/run/docker.sock). */
  engineSocket?: string;
}

interface Exit {
  seen: boolean;
  code: number | null;
  signal: string | null;
}

/** A remote Docker host reached over one pooled SSH connection. */
export class SshHost implements HostConnection {
  /** user@host:port, for messages. */
  readonly target: string;
  readonly #o: SshHostOptions;
  readonly #maxChannels: number;
  #pinned: string | null;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #engine: Docker | undefined;
  #open = 0;
  readonly #waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  #closed = false;

  constructor(options: SshHostOptions) {
    this.#o = options;
    this.target = `${options.username}@${options.host}:${options.port ?? 22}`;
    this.#maxChannels = Math.max(1, options.maxChannels ?? 8);
    this.#pinned = options.hostKeyFingerprint ?? null;
  }

  /** The pinned host key fingerprint; null until the first connection pins one. */
  get hostKeyFingerprint(): string | null {
    return this.#pinned;
  }

  /** Channels open now and calls waiting for one. */
  get channels(): { open: number; waiting: number } {
    return { open: this.#open, waiting: this.#waiting.length };
  }

  /** Runs argv on the server (each argument quoted for its shell, never read as syntax); answers its exit code and output. */
  async run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const line = commandLine(argv);
    options.signal?.throwIfAborted();
    const { channel, exit } = await this.#channel((c, cb) => c.exec(line, cb));
    return new Promise<RunResult>((resolve, reject) => {
      const out: Buffer[] = [],
        err: Buffer[] = [];
      channel.on('data', (d: Buffer) => out.push(d));
      channel.stderr.on('data', (d: Buffer) => err.push(d));
      const onAbort = () => {
        try {
          channel.signal('KILL');
        } catch {
          /* the server may not take signals */
        }
        channel.close();
        reject(options.signal!.reason);
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      // Aborted while the channel was opening (its event came before this listener): stop it now.
      if (options.signal?.aborted) onAbort();
      channel.on('error', (e: Error) => reject(unavailable(`ssh ${this.target}: ${argv[0]}: ${e.message}`)));
      channel.on('close', () => {
        options.signal?.removeEventListener('abort', onAbort);
        if (!exit.seen) return reject(unavailable(`ssh ${this.target}: the connection closed before ${argv[0]} finished`));
        resolve({ code: exit.code, signal: exit.signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
      });
      channel.end(options.stdin);
    });
  }

  /** dockerode speaking to the server's engine over this connection (connects first, so a changed key or a down server fails here). */
  async engine(): Promise<Docker> {
    await this.#connection();
    if (!this.#engine) {
      // host and port only fill the Host header: every request goes through the agent's channel.
      // (docker-modem takes `agent`; dockerode's types do not list it.)
      const options: Docker.DockerOptions & { agent: ChannelAgent } = { protocol: 'http', host: 'docker.sock', port: 80, agent: new ChannelAgent(() => this.#dialEngine()) };
      this.#engine = new Docker(options);
    }
    return this.#engine;
  }

  /** Closes the connection; calls made afterwards fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(unavailable(`ssh ${this.target}: the connection was closed`));
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    await new Promise<void>(resolve => {
      client.once('close', () => resolve());
      client.end();
    });
  }

  /**
   * A byte stream to the server's engine API on a channel of this connection, for a local socket
   * that forwards to it. Programs such as the Compose program keep idle connections in a pool, so
   * a forwarded socket's channels take no slot (OpenSSH's MaxSessions counts sessions, not
   * forwards); over dial-stdio each one is a session and waits for a slot like any command.
   */
  async dialEngine(): Promise<Duplex> {
    return this.#dialEngine(false);
  }

  #dialEngine(slotted = true): Promise<Duplex> {
    if (this.#o.engineTransport === 'dial-stdio') {
      return this.#channel((c, cb) => c.exec('docker system dial-stdio', cb)).then(({ channel }) => {
        channel.stderr.resume();
        return channel;
      });
    }
    const socket = this.#o.engineSocket ?? '/var/run/docker.sock';
    return this.#channel((c, cb) => c.openssh_forwardOutStreamLocal(socket, cb), slotted).then(({ channel }) => channel);
  }

  /** Waits for a free channel slot; the answer gives it back (once). */
  async #slot(): Promise<() => void> {
    if (this.#open < this.#maxChannels) this.#open++;
    else await new Promise<void>((resolve, reject) => this.#waiting.push({ resolve, reject })); // the slot is handed over by release
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next.resolve();
      else this.#open--;
    };
  }

  /**
   * Opens a channel in a slot (a forward without one when slotted is false); a connection found dropped while opening is replaced once. The exit
   * status is recorded from the start: it can arrive in the same packet batch as the channel itself.
   */
  async #channel(open: (client: Client, cb: (err: Error | undefined, channel: ClientChannel) => void) => void, slotted = true): Promise<{ channel: ClientChannel; exit: Exit }> {
    const release = slotted ? await this.#slot() : () => {};
    try {
      for (let attempt = 1; ; attempt++) {
        const client = await this.#connection();
        try {
          const exit: Exit = { seen: false, code: null, signal: null };
          const channel = await new Promise<ClientChannel>((resolve, reject) => {
            try {
              open(client, (err, ch) => {
                if (err) return reject(err);
                ch.once('close', release);
                ch.on('exit', (code: number | null, signal?: string) => Object.assign(exit, { seen: true, code: code ?? null, signal: signal ?? null }));
                resolve(ch);
              });
            } catch (e) {
              reject(e);
            }
          });
          return { channel, exit };
        } catch (e) {
          const dropped = this.#client !== client || /Not connected|No response from server/i.test((e as Error).message);
          if (dropped && attempt === 1) {
            this.#forget(client);
            continue;
          }
          throw dropped ? unavailable(`ssh ${this.#o.host}: the connection dropped (${(e as Error).message})`) : e;
        }
      }
    } catch (e) {
      release();
      throw e;
    }
  }

  #forget(client: Client): void {
    if (this.#client === client) this.#client = undefined;
    client.end();
  }

  /** The live connection, made when there is none (one attempt at a time). */
  #connection(): Promise<Client> {
    if (this.#closed) return Promise.reject(unavailable(`ssh ${this.target}: the connection was closed`));
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<Client> {
    const { Client } = (await import('ssh2')).default; // loaded only when a server is used (a CommonJS module)
    return new Promise<Client>((resolve, reject) => {
      const client = new Client();
      let presented: string | undefined,
        ready = false;
      client.on('ready', () => {
        ready = true;
        if (this.#closed) {
          client.end();
          return reject(unavailable(`ssh ${this.target}: the connection was closed`));
        }
        if (this.#pinned === null && presented) {
          this.#pinned = presented;
          this.#o.onHostKeyPinned?.(presented);
        }
        this.#client = client;
        resolve(client);
      });
      client.on('error', (err: Error & { level?: string; code?: string }) => {
        if (ready) return; // a live connection's error is followed by 'close', which drops it
        if (presented && this.#pinned !== null && presented !== this.#pinned) return reject(new HostKeyChangedError(this.target, this.#pinned, presented));
        const why = err.level === 'client-authentication' ? 'the server refused the key' : (err.code ?? err.message);
        reject(unavailable(`ssh ${this.target}: ${why}`));
      });
      client.on('close', () => {
        if (this.#client === client) this.#client = undefined;
        if (!ready) reject(unavailable(`ssh ${this.target}: the connection closed during login`));
      });
      client.connect({
        host: this.#o.host,
        port: this.#o.port ?? 22,
        username: this.#o.username,
        privateKey: this.#o.privateKey,
        ...(this.#o.passphrase !== undefined ? { passphrase: this.#o.passphrase } : {}),
        readyTimeout: this.#o.readyTimeout ?? 20_000,
        keepaliveInterval: this.#o.keepaliveInterval ?? 15_000,
        keepaliveCountMax: 3,
        hostVerifier: (key: Buffer) => {
          presented = hostKeyFingerprint(key);
          return this.#pinned === null || presented === this.#pinned;
        },
      });
      // Small request/answer packets: without TCP_NODELAY, Nagle and delayed ACKs add ~40 ms per exchange (measured).
      client.setNoDelay(true);
    });
  }
}
