import t from 'tap';
import { channelConformance, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 202 });
  return httpChannelTarget(sink, { webhookUrl: `${sink.url}/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=teams-signature-secret` });
});

t.test('what Teams receives', async t => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 202 });
  const channel = await descriptor.create({}, { config: {} as never });
  await channel.send({ webhookUrl: `${sink.url}/invoke?sig=s` }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const card = JSON.parse(sink.requests[0]!.body).attachments[0];
  t.equal(card.contentType, 'application/vnd.microsoft.card.adaptive');
  t.equal(card.content.body[0].text, '❌ Build failed: shop-web');
  t.same(
    card.content.body[1].facts.map((f: { title: string }) => f.title),
    ['Project', 'Environment', 'Error'],
  );
  t.equal(card.content.actions[0].url, 'http://berth.example/api/deployment.readLogs?deploymentId=d1');
});
