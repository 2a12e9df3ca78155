import t from 'tap';
import { channelConformance, fieldOf, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  return httpChannelTarget(sink, { serverUrl: `${sink.url}/gotify/`, appToken: 'AbCdEf123456', priority: 5 });
});

t.test('what Gotify receives', async t => {
  const sink = await startHttpSink(t);
  const channel = await descriptor.create({}, { config: {} as never });
  await channel.send({ serverUrl: sink.url, appToken: 'tok-123456', priority: 8, decoration: true }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const req = sink.requests[0]!;
  t.equal(req.path, '/message');
  t.equal(req.headers['x-gotify-key'], 'tok-123456', 'the token in a header, not the URL');
  const body = JSON.parse(req.body);
  t.equal(body.title, '❌ Build failed: shop-web');
  t.equal(body.priority, 8);
  t.match(body.message, '**Error:** npm ERR! missing script: build');
  t.equal(
    fieldOf(() => channel.validate!({ serverUrl: 'gotify.example', appToken: 'x' })),
    'serverUrl',
  );
});
