import t from 'tap';
import { channelConformance, fieldOf, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 200, body: '{"status":1,"request":"647d2300"}' });
  return httpChannelTarget(sink, { userKey: 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG', apiToken: 'azGDORePK8gMaC0QOYAMyEEuzJnyUi', priority: 0 }, { apiUrl: sink.url });
});

t.test('what Pushover receives', async t => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 200, body: '{"status":1,"request":"x"}' });
  const channel = await descriptor.create({ apiUrl: sink.url }, { config: {} as never });
  await channel.send({ userKey: 'user-key-1', apiToken: 'app-token-1', priority: 2, retry: 60, expire: 3600 }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const req = sink.requests[0]!;
  t.equal(req.path, '/1/messages.json');
  t.match(JSON.parse(req.body), { token: 'app-token-1', user: 'user-key-1', priority: 2, retry: 60, expire: 3600, html: 1, url_title: 'Details' });
  t.equal(
    fieldOf(() => channel.validate!({ userKey: 'u', apiToken: 'a', priority: 2 })),
    'retry',
    'emergency priority needs retry and expire',
  );
  t.equal((descriptor.options as any).properties.apiUrl.default, 'https://api.pushover.net');
});
