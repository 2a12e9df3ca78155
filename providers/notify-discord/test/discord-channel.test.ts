import t from 'tap';
import { channelConformance, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 204 });
  return httpChannelTarget(sink, { webhookUrl: `${sink.url}/api/webhooks/1/token` });
});

t.test('what Discord receives', async t => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 204 });
  const channel = await descriptor.create({}, { config: {} as never });
  await channel.send({ webhookUrl: `${sink.url}/api/webhooks/1/tok`, decoration: true }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const embed = JSON.parse(sink.requests[0]!.body).embeds[0];
  t.equal(embed.title, '❌ Build failed: shop-web', "decoration: the level's emoji");
  t.equal(embed.color, 0xe01e5a);
  t.same(
    embed.fields.map((f: { name: string }) => f.name),
    ['Project', 'Environment', 'Error'],
  );
  t.equal(embed.url, 'http://berth.example/api/deployment.readLogs?deploymentId=d1');
  await channel.send({ webhookUrl: `${sink.url}/api/webhooks/1/tok` }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  t.equal(JSON.parse(sink.requests[1]!.body).embeds[0].title, 'Build failed: shop-web', 'no decoration: the title alone');
});
