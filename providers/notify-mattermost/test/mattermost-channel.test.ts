import t from 'tap';
import { channelConformance, fieldOf, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  return httpChannelTarget(sink, { webhookUrl: `${sink.url}/hooks/mm-secret-key`, channel: 'town-square', username: 'berth' });
});

t.test('what Mattermost receives', async t => {
  const sink = await startHttpSink(t);
  const channel = await descriptor.create({}, { config: {} as never });
  await channel.send({ webhookUrl: `${sink.url}/hooks/k`, username: 'Berth' }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const body = JSON.parse(sink.requests[0]!.body);
  t.equal(body.username, 'Berth');
  t.notOk('channel' in body, "no channel: the webhook's own");
  t.equal(body.text, '❌ **Build failed: shop-web**');
  t.same(
    body.attachments[0].fields.map((f: { title: string }) => f.title),
    ['Project', 'Environment', 'Error'],
  );
  t.equal(
    fieldOf(() => channel.validate!({ webhookUrl: '/hooks/x' })),
    'webhookUrl',
  );
});
