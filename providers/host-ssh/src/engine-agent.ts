// dockerode's HTTP requests over SSH channels: an http.Agent whose connections are byte streams to
// the remote engine (a forwarded unix socket or `docker system dial-stdio`), opened on the server's
// pooled connection. No keep-alive: each request's channel closes with its response, so it gives
// its slot back at once and an idle engine holds no channel.
import http from 'node:http';
import type { Duplex } from 'node:stream';

/** Opens one byte stream to the remote engine's API. */
export type EngineDialer = () => Promise<Duplex>;

/** The socket methods Node's HTTP client calls that an SSH channel lacks: none of them applies to a channel. */
function asSocket(stream: Duplex): Duplex {
  const s = stream as Duplex & Record<string, unknown>;
  for (const m of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref']) {
    if (typeof s[m] !== 'function') s[m] = () => s;
  }
  return s;
}

/** An HTTP agent whose every connection is a new stream from dial. */
export class ChannelAgent extends http.Agent {
  readonly #dial: EngineDialer;
  constructor(dial: EngineDialer) {
    super({ keepAlive: false });
    this.#dial = dial;
  }

  override createConnection(_options: unknown, callback?: (err: Error | null, stream: Duplex) => void): undefined {
    this.#dial().then(
      stream => callback?.(null, asSocket(stream)),
      (err: Error) => callback?.(err, undefined as never), // cast: node's callback types no socket beside an error
    );
    return undefined;
  }
}
