import t from 'tap';
import { channelConformance, fieldOf, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  return httpChannelTarget(sink, { serverUrl: sink.url, topic: 'berth-alerts', accessToken: 'tk_secret123', priority: 4 });
});

t.test('what ntfy receives', async t => {
  const sink = await startHttpSink(t);
  const channel = await descriptor.create({}, { config: {} as never });
  await channel.send({ serverUrl: `${sink.url}/`, topic: 'ops', priority: 5, accessToken: 'tk_abcdef' }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const req = sink.requests[0]!;
  t.equal(req.path, '/');
  t.equal(req.headers.authorization, 'Bearer tk_abcdef');
  t.match(JSON.parse(req.body), { topic: 'ops', title: 'Build failed: shop-web', priority: 5, tags: ['x'], click: 'http://berth.example/api/deployment.readLogs?deploymentId=d1' });
  await channel.send({ serverUrl: sink.url, topic: 'ops' }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  t.notOk(sink.requests[1]!.headers.authorization, 'no token: no Authorization header');
  t.equal(
    fieldOf(() => channel.validate!({ serverUrl: sink.url, topic: 'a/b' })),
    'topic',
  );
});
