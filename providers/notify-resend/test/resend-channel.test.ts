import t from 'tap';
import { channelConformance, fieldOf, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 200, body: '{"id":"49a3999c"}' });
  return httpChannelTarget(sink, { apiKey: 're_secret', fromAddress: 'Berth <berth@example.com>', toAddresses: ['ops@example.com'] }, { apiUrl: sink.url });
});

t.test('what Resend receives', async t => {
  const sink = await startHttpSink(t);
  const channel = await descriptor.create({ apiUrl: sink.url }, { config: {} as never });
  const message = sampleMessage();
  await channel.send({ apiKey: 're_abc', fromAddress: 'berth@example.com', toAddresses: ['a@example.com', 'b@example.com'] }, message, { signal: AbortSignal.timeout(5_000) });
  const req = sink.requests[0]!;
  t.equal(req.path, '/emails');
  t.equal(req.headers.authorization, 'Bearer re_abc');
  t.equal(req.headers['idempotency-key'], message.id, 'a retry of the same delivery is not sent twice by Resend');
  const body = JSON.parse(req.body);
  t.same(body.to, ['a@example.com', 'b@example.com']);
  t.equal(body.subject, '❌ Build failed: shop-web');
  t.equal(
    fieldOf(() => channel.validate!({ apiKey: 'k', fromAddress: 'nope', toAddresses: ['a@example.com'] })),
    'fromAddress',
  );
  t.equal((descriptor.options as any).properties.apiUrl.default, 'https://api.resend.com');
});
