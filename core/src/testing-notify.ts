// The conformance suite every notification channel's test calls, the loopback HTTP sink the
// channels are tested against (no chat service can be reached from the test machines: it records
// each request and answers what the test planned — a status and body, a hang, or a reset), and a
// real SMTP server (smtp-server: implicit TLS, STARTTLS or plain, with AUTH).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import type { NotificationChannel, NotificationMessage } from './contracts/notification-channel.ts';
import { ChannelError } from './provider-errors.ts';
import type { ProviderDescriptor } from './provider.ts';
import { descriptorConformance } from './testing-conformance.ts';
import { newId } from './crypto.ts';

export interface SinkRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}
/** What the sink answers one request: a status and body, no answer at all (`hang`), or a cut connection (`reset`). */
export type SinkAnswer = { status: number; body?: string; headers?: Record<string, string> } | 'hang' | 'reset';

export interface HttpSink {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request received, in order. */
  requests: SinkRequest[];
  /** The answers of the next requests, in order; after them the default (200 `{"ok":true}`). */
  plan(...answers: SinkAnswer[]): void;
  /** The answer when nothing is planned. */
  setDefault(answer: SinkAnswer): void;
  /** Requests whose path starts with the prefix. */
  to(prefix: string): SinkRequest[];
  close(): Promise<void>;
}

/** Starts a recording HTTP server on 127.0.0.1 (closed at teardown). */
export async function startHttpSink(t: Test): Promise<HttpSink> {
  const requests: SinkRequest[] = [];
  const planned: SinkAnswer[] = [];
  let fallback: SinkAnswer = { status: 200, body: '{"ok":true}' };
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', c => parts.push(c as Buffer));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(parts).toString('utf8'), at: Date.now() });
      const answer = planned.shift() ?? fallback;
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  const close = async () => {
    for (const res of hanging) res.socket?.destroy();
    server.closeAllConnections();
    await new Promise<void>(r => server.close(() => r()));
  };
  t.teardown(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    plan: (...answers) => void planned.push(...answers),
    setDefault: answer => {
      fallback = answer;
    },
    to: prefix => requests.filter(r => r.path.startsWith(prefix)),
    close,
  };
}

/** The paths in a JSON schema of strings without maxLength, arrays without maxItems and maps without maxProperties. */
export function unbounded(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Record<string, any>;
  const types = [s.type].flat();
  const own = (types.includes('string') && !('enum' in s) && !('const' in s) && s.maxLength === undefined ? [`${at || '(root)'}: a string without maxLength`] : [])
    .concat(types.includes('array') && s.maxItems === undefined ? [`${at}: a list without maxItems`] : [])
    .concat(types.includes('object') && (s.patternProperties || typeof s.additionalProperties === 'object') && s.maxProperties === undefined ? [`${at}: a map without maxProperties`] : []);
  const inner = [
    ...Object.entries(s.properties ?? {}).map(([k, v]) => unbounded(v, at ? `${at}.${k}` : k)),
    ...Object.values(s.patternProperties ?? {}).map(v => unbounded(v, `${at}.*`)),
    ...(typeof s.additionalProperties === 'object' ? [unbounded(s.additionalProperties, `${at}.*`)] : []),
    ...(s.items ? [unbounded(s.items, `${at}[]`)] : []),
    ...[...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].map(v => unbounded(v, at)),
  ];
  return own.concat(...inner);
}

/** A message as the notification plugin renders one. */
export const sampleMessage = (over: Partial<NotificationMessage> = {}): NotificationMessage => ({
  id: `msg_${newId(16)}`,
  event: 'appBuildError',
  level: 'error',
  title: 'Build failed: shop-web',
  fields: [
    { name: 'Project', value: 'shop' },
    { name: 'Environment', value: 'production' },
    { name: 'Error', value: 'npm ERR! missing script: build' },
  ],
  link: 'http://berth.example/api/deployment.readLogs?deploymentId=d1',
  at: new Date().toISOString(),
  data: { applicationId: 'a1', appName: 'shop-web', error: 'npm ERR! missing script: build' },
  ...over,
});

/** Where a channel under test sends, and how the test reads what arrived there. */
export interface ChannelTarget {
  /** The provider's options (defaults apply), e.g. an apiUrl pointing at the sink. */
  options?: Record<string, unknown>;
  /** Settings that deliver to the target. */
  settings: Record<string, unknown>;
  /** The raw texts (bodies, mails) the target received so far. */
  received(): Promise<string[]>;
  /**
   * Ways to make the next send fail, each with the status the ChannelError must carry (null:
   * no answer) and a text the error must not contain (the secret the settings carry).
   */
  failures: { name: string; arrange(): void; settings?: Record<string, unknown>; status: number | null }[];
  /** Makes the next send hang (never answer), or answers settings that do: the send must end when the signal aborts. */
  hang?(): Record<string, unknown> | void;
}

/** A target on the HTTP sink: settings made from its URL; a 500, a 401 and a reset as failures. */
export function httpChannelTarget(sink: HttpSink, settings: Record<string, unknown>, options?: Record<string, unknown>): ChannelTarget {
  return {
    ...(options ? { options } : {}),
    settings,
    received: async () => sink.requests.map(r => r.body),
    failures: [
      { name: 'a 500', arrange: () => sink.plan({ status: 500, body: '{"error":"internal"}' }), status: 500 },
      { name: 'a 401', arrange: () => sink.plan({ status: 401, body: '{"error":"invalid token"}' }), status: 401 },
      { name: 'a reset connection', arrange: () => sink.plan('reset'), status: null },
    ],
    hang: () => sink.plan('hang'),
  };
}

/**
 * The descriptor; the instance's names and settings schema; a message that arrives with its
 * title and fields; failures that become ChannelErrors with the provider's status; a hanging
 * provider given up when the signal aborts.
 */
export function channelConformance(t: Test, descriptor: ProviderDescriptor, target: () => Promise<ChannelTarget> | ChannelTarget): void {
  t.test(`notification channel ${descriptor.id}: conformance`, async t => {
    const tg = await target();
    const channel = await descriptorConformance<NotificationChannel>(t, descriptor, 'notify', tg.options);
    t.match(channel.label, /^\S/, 'it has a label');
    t.match(channel.procedureSuffix, /^[A-Z][A-Za-z0-9]*$/, 'its procedure suffix is one capitalised word');
    const schema = channel.settings as { type?: string; properties?: Record<string, unknown> };
    t.equal(schema.type, 'object', 'its settings are an object schema');
    for (const f of channel.secretFields) t.ok(schema.properties?.[f], `secret field ${f} is one of its settings`);
    t.notOk(schema.properties?.notificationId ?? schema.properties?.name, "its settings do not reuse the record's own fields");
    t.same(unbounded(channel.settings), [], 'every string of its settings has a maxLength, every list a maxItems, every map a maxProperties');
    channel.validate?.(tg.settings);

    const message = sampleMessage();
    const ctx = () => ({ signal: AbortSignal.timeout(5_000), signingSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    const before = (await tg.received()).length;
    const answer = await channel.send(tg.settings, message, ctx());
    t.ok(answer.status === null || (answer.status >= 200 && answer.status < 300), `a delivered message answers the provider's success (${answer.status})`);
    const arrived = (await tg.received()).slice(before);
    t.equal(arrived.length, 1, 'exactly one request or mail arrived');
    t.match(arrived[0] ?? '', message.title, 'it carries the title');
    t.match(arrived[0] ?? '', 'npm ERR! missing script: build', 'and the fields (the error)');

    for (const f of tg.failures) {
      f.arrange();
      const error = await channel.send(f.settings ?? tg.settings, sampleMessage(), ctx()).then(
        () => null,
        (e: unknown) => e,
      );
      t.ok(error instanceof ChannelError, `${f.name}: a ChannelError (${(error as Error)?.message})`);
      if (error instanceof ChannelError) {
        t.equal(error.status, f.status, `${f.name}: the provider's status`);
        t.match(error.message, new RegExp(`^${channel.label}`), `${f.name}: the message starts with the channel's label`);
      }
    }

    if (tg.hang) {
      const hanging = tg.hang() ?? tg.settings;
      const started = Date.now();
      const error = await channel.send(hanging, sampleMessage(), { signal: AbortSignal.timeout(400) }).then(
        () => null,
        (e: unknown) => e,
      );
      t.ok(error instanceof ChannelError, 'a provider that never answers: a ChannelError');
      t.ok(Date.now() - started < 3_000, `given up when the signal aborts (${Date.now() - started} ms)`);
    }
  });
}

/** The field a validation error names (its first issue's path, dotted), or null when nothing was thrown. */
export function fieldOf(fn: () => unknown): string | null {
  try {
    fn();
  } catch (e) {
    return ((e as { issues?: { path: (string | number)[] }[] }).issues?.[0]?.path ?? ['<no issue>']).join('.');
  }
  return null;
}

// ---- a real SMTP server ------------------------------------------------------------------------

export interface TestSmtp {
  port: number;
  mails: string[];
  close(): Promise<void>;
}
export interface TestCertificate {
  certFile: string;
  cert: string;
  key: string;
}

export function makeCertificate(t: Test): TestCertificate {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-smtp-cert-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      path.join(dir, 'k.pem'),
      '-out',
      path.join(dir, 'c.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { certFile: path.join(dir, 'c.pem'), cert: readFileSync(path.join(dir, 'c.pem'), 'utf8'), key: readFileSync(path.join(dir, 'k.pem'), 'utf8') };
}

/** mode: implicit = TLS at once; starttls = offers STARTTLS; none = no TLS at all. AUTH as user/pass. */
export async function startSmtp(t: Test, cert: TestCertificate, mode: 'implicit' | 'starttls' | 'none', account = { user: 'berth', pass: 'mail-secret' }): Promise<TestSmtp> {
  const mails: string[] = [];
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    secure: mode === 'implicit',
    disabledCommands: mode === 'none' ? ['STARTTLS'] : [],
    allowInsecureAuth: mode === 'none',
    key: cert.key,
    cert: cert.cert,
    logger: false,
    onAuth(auth: { username?: string | null; password?: string | null }, _session: unknown, cb: (err: Error | null, res?: { user: string }) => void) {
      if (auth.username === account.user && auth.password === account.pass) cb(null, { user: account.user });
      else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream: NodeJS.ReadableStream, _session: unknown, cb: () => void) {
      const parts: Buffer[] = [];
      stream.on('data', c => parts.push(c as Buffer));
      stream.on('end', () => {
        mails.push(Buffer.concat(parts).toString('utf8'));
        cb();
      });
    },
  });
  // A client that gives up mid-handshake (an untrusted certificate) is an error event, not a crash.
  server.on('error', () => {});
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as net.AddressInfo).port;
  const close = () => new Promise<void>(r => server.close(() => r()));
  t.teardown(close);
  return { port, mails, close };
}

/** A TCP server that accepts and never says a word (an SMTP server that hangs). */
export async function startSilentServer(t: Test): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer(s => void sockets.add(s));
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as net.AddressInfo).port;
}
