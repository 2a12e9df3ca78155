import t from 'tap';
import { ChannelError } from '@berth/core';
import { channelConformance, freePort, makeCertificate, sampleMessage, startSilentServer, startSmtp } from '@berth/core/testing';
import { fieldOf } from '@berth/core/testing';
import descriptor from '../src/index.ts';
import { defaultTlsMode } from '../src/email-channel.ts';

const cert = makeCertificate(t);
const base = { username: 'berth', password: 'mail-secret', fromAddress: 'berth@example.com', toAddresses: ['ops@example.com', 'dev@example.com'] };

channelConformance(t, descriptor, async () => {
  const smtp = await startSmtp(t, cert, 'starttls');
  const settings = { ...base, smtpServer: '127.0.0.1', smtpPort: smtp.port };
  const closed = await freePort();
  const silent = await startSilentServer(t);
  return {
    options: { caFile: cert.certFile },
    settings,
    received: async () => smtp.mails,
    failures: [
      { name: 'refused credentials', arrange: () => {}, settings: { ...settings, password: 'wrong-password' }, status: 535 },
      { name: 'nothing listening', arrange: () => {}, settings: { ...settings, smtpPort: closed }, status: null },
    ],
    hang: () => ({ ...settings, smtpPort: silent }),
  };
});

t.test('each tlsMode against a server of that kind, with AUTH', async t => {
  const channel = await descriptor.create({ caFile: cert.certFile }, { config: {} as never });
  for (const mode of ['implicit', 'starttls', 'none'] as const) {
    const smtp = await startSmtp(t, cert, mode);
    await channel.send({ ...base, smtpServer: '127.0.0.1', smtpPort: smtp.port, tlsMode: mode }, sampleMessage(), { signal: AbortSignal.timeout(10_000) });
    t.equal(smtp.mails.length, 1, `${mode}: the mail arrived`);
    t.match(smtp.mails[0], /^To: ops@example.com, dev@example.com/m, `${mode}: to every recipient`);
    t.match(smtp.mails[0], /X-Berth-Event: appBuildError/);
  }
});

t.test('a mode the server does not speak fails with the reason', async t => {
  const channel = await descriptor.create({ caFile: cert.certFile }, { config: {} as never });
  const plain = await startSmtp(t, cert, 'none');
  const e = await channel.send({ ...base, smtpServer: '127.0.0.1', smtpPort: plain.port, tlsMode: 'starttls' }, sampleMessage(), { signal: AbortSignal.timeout(10_000) }).catch(x => x);
  t.ok(e instanceof ChannelError, `starttls against a server without STARTTLS: ${e.message}`);
  t.equal(plain.mails.length, 0, 'nothing was sent in clear');
  const implicit = await startSmtp(t, cert, 'implicit');
  const e2 = await channel.send({ ...base, smtpServer: '127.0.0.1', smtpPort: implicit.port, tlsMode: 'starttls' }, sampleMessage(), { signal: AbortSignal.timeout(3_000) }).catch(x => x);
  t.ok(e2 instanceof ChannelError, `starttls against implicit TLS: ${e2.message}`);
  const untrusted = await descriptor.create({ caFile: '' }, { config: {} as never });
  const e3 = await untrusted.send({ ...base, smtpServer: '127.0.0.1', smtpPort: implicit.port }, sampleMessage(), { signal: AbortSignal.timeout(10_000) }).catch(x => x);
  t.ok(e3 instanceof ChannelError, `an untrusted certificate is refused: ${e3.message}`);
  t.equal(implicit.mails.length, 0);
});

t.test('the default mode follows the port, and bad addresses name the field', async t => {
  t.equal(defaultTlsMode(465), 'implicit');
  t.equal(defaultTlsMode(587), 'starttls');
  t.equal(defaultTlsMode(25), 'starttls');
  const channel = await descriptor.create({ caFile: '' }, { config: {} as never });
  const good = { ...base, smtpServer: 'mail.example', smtpPort: 587 };
  t.doesNotThrow(() => channel.validate!(good));
  t.equal(
    fieldOf(() => channel.validate!({ ...good, toAddresses: ['ok@example.com', 'nope'] })),
    'toAddresses.1',
  );
  t.equal(
    fieldOf(() => channel.validate!({ ...good, fromAddress: 'x' })),
    'fromAddress',
  );
  t.equal(
    fieldOf(() => channel.validate!({ ...good, smtpPort: 58.5 })),
    'smtpPort',
  );
});
