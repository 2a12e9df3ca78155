import t from 'tap';
import { ChannelError } from '@berth/core';
import { channelConformance, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 200, body: '{"code":0,"msg":"success","data":{}}' });
  return httpChannelTarget(sink, { webhookUrl: `${sink.url}/open-apis/bot/v2/hook/lark-secret-hook` });
});

t.test('what Lark receives, and a refusal inside a 200', async t => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 200, body: '{"code":0,"msg":"success"}' });
  const channel = await descriptor.create({}, { config: {} as never });
  await channel.send({ webhookUrl: `${sink.url}/hook/x` }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  const body = JSON.parse(sink.requests[0]!.body);
  t.equal(body.msg_type, 'interactive');
  t.equal(body.card.header.title.content, '❌ Build failed: shop-web');
  t.equal(body.card.header.template, 'red');
  sink.plan({ status: 200, body: '{"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"}' });
  const e = await channel.send({ webhookUrl: `${sink.url}/hook/x` }, sampleMessage(), { signal: AbortSignal.timeout(5_000) }).catch(x => x);
  t.ok(e instanceof ChannelError, 'code 19021 in a 200 is a failure');
  t.match(e.message, 'sign match fail');
});
