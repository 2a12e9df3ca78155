import t from 'tap';
import { ChannelError } from '@berth/core';
import { channelConformance, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import descriptor from '../src/index.ts';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 200, body: '{"ok":true,"result":{"message_id":1}}' });
  return httpChannelTarget(sink, { botToken: '123:secret-token', chatId: '-100' }, { apiUrl: sink.url });
});

t.test('what Telegram receives, and a refused token', async t => {
  const sink = await startHttpSink(t);
  sink.setDefault({ status: 200, body: '{"ok":true,"result":{"message_id":1}}' });
  const channel = await descriptor.create({ apiUrl: `${sink.url}/` }, { config: {} as never });
  await channel.send({ botToken: '123:abc', chatId: '-100', messageThreadId: '7' }, sampleMessage(), { signal: AbortSignal.timeout(5_000) });
  t.equal(sink.requests[0]!.path, '/bot123%3Aabc/sendMessage', 'the token in the path, as the Bot API wants it');
  const body = JSON.parse(sink.requests[0]!.body);
  t.equal(body.chat_id, '-100');
  t.equal(body.message_thread_id, 7);
  t.equal(body.parse_mode, 'HTML');
  t.match(body.text, '<b>❌ Build failed: shop-web</b>');
  t.match(body.text, '<b>Error:</b> npm ERR! missing script: build');

  sink.plan({ status: 401, body: '{"ok":false,"error_code":401,"description":"Unauthorized"}' });
  const e = await channel.send({ botToken: '123:wrong', chatId: '-100' }, sampleMessage(), { signal: AbortSignal.timeout(5_000) }).catch(x => x);
  t.ok(e instanceof ChannelError);
  t.equal(e.status, 401, "the provider's status");
  t.equal(e.message, 'Telegram answered 401: Unauthorized', "the Bot API's description, not its whole answer");

  sink.plan({ status: 200, body: '{"ok":false,"description":"Bad Request: chat not found"}' });
  const e2 = await channel.send({ botToken: '123:abc', chatId: 'nope' }, sampleMessage(), { signal: AbortSignal.timeout(5_000) }).catch(x => x);
  t.ok(e2 instanceof ChannelError, 'a 200 that says ok:false is a failure too (the answer is read, not trusted)');
  const options = descriptor.options as any;
  t.equal(options.properties.apiUrl.default, 'https://api.telegram.org', 'the public Bot API by default');
});
