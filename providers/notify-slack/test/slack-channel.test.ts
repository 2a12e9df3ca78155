import t from 'tap';
import { channelConformance, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import { fieldOf } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  return httpChannelTarget(sink, { webhookUrl: `${sink.url}/services/T0/B0/secret`, channel: '#deploys' });
});

t.test('what Slack receives', async t => {
  const sink = await startHttpSink(t);
  const channel = await descriptor.create({}, { config: {} as never });
  await channel.send({ webhookUrl: `${sink.url}/services/T0/B0/xyz`, channel: '#ops' }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const [req] = sink.requests;
  t.equal(req!.path, '/services/T0/B0/xyz');
  t.equal(req!.headers['content-type'], 'application/json');
  const body = JSON.parse(req!.body);
  t.equal(body.channel, '#ops');
  t.equal(body.text, '❌ Build failed: shop-web');
  t.same(
    body.attachments[0].fields.map((f: { title: string }) => f.title),
    ['Project', 'Environment', 'Error'],
  );
  t.equal(body.attachments[0].actions[0].url, 'http://berth.example/api/deployment.readLogs?deploymentId=d1', 'a button to the log');
  t.equal(
    fieldOf(() => channel.validate!({ webhookUrl: 'not a url' })),
    'webhookUrl',
  );
});
