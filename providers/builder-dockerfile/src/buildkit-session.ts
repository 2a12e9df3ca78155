// Build secrets through the engine's BuildKit, with no CLI program: a session is opened on the
// engine (`POST /session`, upgraded to h2c) through the same connection as every other engine
// request (a server's goes over its SSH connection), and on that socket the daemon is the gRPC
// client: it asks this side for each `RUN --mount=type=secret,id=KEY` secret by id. The values
// travel only on that socket, never in the build request (no build args, labels or context files).
// Messages (moby/buildkit session/secrets/secrets.proto, grpc/health/v1/health.proto):
//   GetSecretRequest { string ID = 1; map<string,string> annotations = 2; }  GetSecretResponse { bytes data = 1; }
//   HealthCheckResponse { ServingStatus status = 1; }  (SERVING = 1)
import { randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import protobuf from 'protobufjs/minimal.js';

const GET_SECRET = '/moby.buildkit.secrets.v1.Secrets/GetSecret';
const HEALTH_CHECK = '/grpc.health.v1.Health/Check';
/** gRPC status codes used here (grpc/grpc doc/statuscodes.md). */
const GRPC_OK = 0,
  GRPC_INVALID_ARGUMENT = 3,
  GRPC_NOT_FOUND = 5,
  GRPC_UNIMPLEMENTED = 12;

export interface SecretSession {
  /** The id a build names as `session=` to reach these secrets. */
  readonly id: string;
  /** The secret ids the daemon asked for (never their values). */
  readonly requested: string[];
  /** Ends the session: the socket is closed and later requests of the daemon fail. */
  close(): void;
}

/** GetSecretRequest's ID (field 1); the annotations (field 2) are skipped. */
export function decodeSecretId(message: Uint8Array): string {
  const reader = protobuf.Reader.create(message);
  let id = '';
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) id = reader.string();
    else reader.skipType(tag & 7);
  }
  return id;
}

/** GetSecretResponse { data = 1 }. */
export function encodeSecretResponse(data: Uint8Array): Uint8Array {
  return protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .bytes(data)
    .finish();
}

/** HealthCheckResponse { status = SERVING }. */
function encodeServing(): Uint8Array {
  return protobuf.Writer.create()
    .uint32(1 << 3)
    .int32(1)
    .finish();
}

/** A gRPC length-prefixed message: compressed flag (0), 4-byte big-endian length, payload. */
function grpcFrame(payload: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** The first message of a unary request body, or null when the body holds none (or a compressed one). */
function firstMessage(body: Buffer): Buffer | null {
  if (body.length < 5 || body[0] !== 0) return null;
  const length = body.readUInt32BE(1);
  return body.length >= 5 + length ? body.subarray(5, 5 + length) : null;
}

function answer(stream: http2.ServerHttp2Stream, status: number, message: string, payload?: Uint8Array): void {
  if (stream.destroyed || stream.closed) return;
  if (payload === undefined) {
    // Trailers-only response: the status travels in the headers.
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(status), 'grpc-message': encodeURIComponent(message) }, { endStream: true });
    return;
  }
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(status) }));
  stream.end(grpcFrame(payload));
}

/** Serves secrets and health checks to the daemon on the hijacked session socket. */
function serve(socket: Duplex, secrets: Record<string, string>, requested: string[]): http2.Http2Server {
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const method = headers[':path'];
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => {
      /* the daemon dropped the call */
    });
    stream.on('end', () => {
      const message = firstMessage(Buffer.concat(chunks));
      if (method === HEALTH_CHECK) return answer(stream, GRPC_OK, '', encodeServing());
      if (method !== GET_SECRET) return answer(stream, GRPC_UNIMPLEMENTED, `${String(method)} is not served by Berth's build session`);
      if (message === null) return answer(stream, GRPC_INVALID_ARGUMENT, 'no request message');
      const id = decodeSecretId(message);
      requested.push(id);
      if (!Object.hasOwn(secrets, id)) return answer(stream, GRPC_NOT_FOUND, `secret ${id} not found`);
      answer(stream, GRPC_OK, '', encodeSecretResponse(Buffer.from(secrets[id]!, 'utf8')));
    });
  });
  server.on('sessionError', () => {
    /* the socket closed under the session: the build request reports the failure */
  });
  server.emit('connection', socket);
  return server;
}

/**
 * Opens a BuildKit session on the engine that serves `secrets` (id = the key). The request goes
 * through the engine's own connection (dockerode's modem: the local socket, or a server's SSH
 * channel), so a remote engine gets its session the same way it gets the build.
 */
export async function openSecretSession(engine: Docker, secrets: Record<string, string>, signal: AbortSignal): Promise<SecretSession> {
  const id = randomUUID();
  const requested: string[] = [];
  const socket = await new Promise<Duplex>((resolve, reject) => {
    engine.modem.dial(
      {
        path: '/session',
        method: 'POST',
        hijack: true,
        abortSignal: signal,
        headers: {
          Upgrade: 'h2c',
          'X-Docker-Expose-Session-Uuid': id,
          'X-Docker-Expose-Session-Name': 'berth',
          'X-Docker-Expose-Session-Sharedkey': id,
          // One header line per method (node sends an array as repeated lines).
          'X-Docker-Expose-Session-Grpc-Method': [GET_SECRET, HEALTH_CHECK],
        },
        statusCodes: { 101: true, 200: true, 400: 'bad parameter', 404: 'no such endpoint', 500: 'server error' },
      },
      (err: unknown, data: unknown) => {
        if (err) return reject(new Error(`The engine did not open a build session: ${(err as Error).message ?? String(err)}`));
        // cast: with hijack the modem answers the upgraded socket.
        const sock = data as Duplex | undefined;
        if (!sock || typeof sock.write !== 'function') return reject(new Error('The engine did not open a build session (no upgrade): it needs BuildKit (Docker 18.09 or later)'));
        resolve(sock);
      },
    );
  });
  const server = serve(socket, secrets, requested);
  let closed = false;
  return {
    id,
    requested,
    close() {
      if (closed) return;
      closed = true;
      server.close();
      socket.destroy();
    },
  };
}
