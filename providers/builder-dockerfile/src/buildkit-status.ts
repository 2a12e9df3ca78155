// The output of a BuildKit build through the engine API: JSON lines whose `aux` (id
// "moby.buildkit.trace") is a base64 StatusResponse of moby/buildkit's control.proto:
//   StatusResponse { repeated Vertex vertexes = 1; repeated VertexStatus statuses = 2; repeated VertexLog logs = 3; ... }
//   Vertex { string digest = 1; ...; string name = 3; bool cached = 4; Timestamp started = 5; Timestamp completed = 6; string error = 7; }
//   VertexLog { string vertex = 1; Timestamp timestamp = 2; int64 stream = 3; bytes msg = 4; }
// Turned into log lines in the style of `--progress=plain`: "#N name", "#N <output>", "#N DONE".
import protobuf from 'protobufjs/minimal.js';

interface VertexUpdate {
  digest: string;
  name: string;
  cached: boolean;
  started: boolean;
  completed: boolean;
  error: string;
}

interface LogUpdate {
  vertex: string;
  msg: Uint8Array;
}

function decodeVertex(bytes: Uint8Array): VertexUpdate {
  const r = protobuf.Reader.create(bytes);
  const v: VertexUpdate = { digest: '', name: '', cached: false, started: false, completed: false, error: '' };
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1) v.digest = r.string();
    else if (field === 3) v.name = r.string();
    else if (field === 4) v.cached = r.bool();
    else if (field === 5 || field === 6) {
      r.skipType(tag & 7);
      if (field === 5) v.started = true;
      else v.completed = true;
    } else if (field === 7) v.error = r.string();
    else r.skipType(tag & 7);
  }
  return v;
}

function decodeLog(bytes: Uint8Array): LogUpdate {
  const r = protobuf.Reader.create(bytes);
  const l: LogUpdate = { vertex: '', msg: new Uint8Array() };
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1) l.vertex = r.string();
    else if (field === 4) l.msg = r.bytes();
    else r.skipType(tag & 7);
  }
  return l;
}

/** Decodes a StatusResponse into its vertexes and logs (statuses and warnings are skipped). */
export function decodeStatus(bytes: Uint8Array): { vertexes: VertexUpdate[]; logs: LogUpdate[] } {
  const r = protobuf.Reader.create(bytes);
  const vertexes: VertexUpdate[] = [];
  const logs: LogUpdate[] = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === 2) vertexes.push(decodeVertex(r.bytes()));
    else if (field === 3 && (tag & 7) === 2) logs.push(decodeLog(r.bytes()));
    else r.skipType(tag & 7);
  }
  return { vertexes, logs };
}

interface VertexState {
  n: number;
  name: string;
  announced: boolean;
  done: boolean;
  /** Output not yet ended by a newline (a line, and so a secret in it, may span two messages). */
  partial: string;
}

/** Follows a BuildKit build's trace: log lines out, and the step that failed with its error. */
export class BuildKitTrace {
  readonly #vertexes = new Map<string, VertexState>();
  readonly #log: (line: string) => void;
  /** The first vertex that failed: its name and BuildKit's error. */
  failure: { step: string; error: string } | null = null;

  constructor(log: (line: string) => void) {
    this.#log = log;
  }

  #state(digest: string, name = ''): VertexState {
    let s = this.#vertexes.get(digest);
    if (!s) {
      s = { n: this.#vertexes.size + 1, name, announced: false, done: false, partial: '' };
      this.#vertexes.set(digest, s);
    }
    if (name) s.name = name;
    return s;
  }

  #flush(s: VertexState): void {
    if (s.partial.trim()) this.#log(`#${s.n} ${s.partial.trimEnd()}`);
    s.partial = '';
  }

  /** One `aux` of a "moby.buildkit.trace" line. */
  add(aux: string): void {
    const { vertexes, logs } = decodeStatus(Buffer.from(aux, 'base64'));
    for (const v of vertexes) {
      const s = this.#state(v.digest, v.name);
      if (!s.announced && (v.started || v.cached || v.completed)) {
        s.announced = true;
        this.#log(`#${s.n} ${s.name}`);
      }
      if (v.error) {
        this.#flush(s);
        if (!s.done) this.#log(`#${s.n} ERROR: ${v.error}`);
        s.done = true;
        this.failure ??= { step: s.name, error: v.error };
      } else if (v.completed && !s.done) {
        this.#flush(s);
        s.done = true;
        this.#log(`#${s.n} ${v.cached ? 'CACHED' : 'DONE'}`);
      }
    }
    for (const l of logs) {
      const s = this.#state(l.vertex);
      const lines = (s.partial + Buffer.from(l.msg).toString('utf8')).split(/\r?\n/);
      s.partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.#log(`#${s.n} ${line.trimEnd()}`);
    }
  }

  /** Logs what is left of unfinished output lines. */
  end(): void {
    for (const s of this.#vertexes.values()) this.#flush(s);
  }
}
