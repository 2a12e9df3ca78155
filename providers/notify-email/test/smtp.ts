// A real SMTP server for the email channel's tests (smtp-server): implicit TLS, STARTTLS or plain,
// with AUTH against one account, keeping every mail it accepts. Its certificate is self-signed,
// made by openssl for 127.0.0.1 and trusted by the channel through the provider's caFile option.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { SMTPServer } from 'smtp-server';

export interface TestSmtp { port: number; mails: string[]; close(): Promise<void> }
export interface TestCertificate { certFile: string; cert: string; key: string }

export function makeCertificate(t: Test): TestCertificate {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-smtp-cert-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem'),
    '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { certFile: path.join(dir, 'c.pem'), cert: readFileSync(path.join(dir, 'c.pem'), 'utf8'), key: readFileSync(path.join(dir, 'k.pem'), 'utf8') };
}

/** mode: implicit = TLS at once; starttls = offers STARTTLS; none = no TLS at all. AUTH as user/pass. */
export async function startSmtp(t: Test, cert: TestCertificate, mode: 'implicit' | 'starttls' | 'none', account = { user: 'berth', pass: 'mail-secret' }): Promise<TestSmtp> {
  const mails: string[] = [];
  const server = new SMTPServer({
    secure: mode === 'implicit',
    disabledCommands: mode === 'none' ? ['STARTTLS'] : [],
    allowInsecureAuth: mode === 'none',
    key: cert.key,
    cert: cert.cert,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === account.user && auth.password === account.pass) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, _session, cb) {
      const parts: Buffer[] = [];
      stream.on('data', c => parts.push(c as Buffer));
      stream.on('end', () => { mails.push(Buffer.concat(parts).toString('utf8')); cb(); });
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
  t.teardown(() => { for (const s of sockets) s.destroy(); server.close(); });
  return (server.address() as net.AddressInfo).port;
}
