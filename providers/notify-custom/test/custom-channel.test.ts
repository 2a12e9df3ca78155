import t from 'tap';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { channelConformance, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import { fieldOf } from '@berth/core/testing';
import descriptor from '../src/index.ts';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  return httpChannelTarget(sink, { endpoint: `${sink.url}/hooks/berth?token=abc`, headers: { authorization: 'Bearer receiver' } });
});

/** The verification snippet of the README, as a receiver would write it with node:crypto alone. */
function verify(secret: string, headers: Record<string, string | string[] | undefined>, body: string): boolean {
  const id = String(headers['webhook-id']), ts = String(headers['webhook-timestamp']);
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest();
  return String(headers['webhook-signature']).split(' ').some(sig => {
    const [version, value] = sig.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

t.test('a signed delivery verifies with the Standard Webhooks library and with the README snippet', async t => {
  const sink = await startHttpSink(t);
  const channel = await descriptor.create({}, { config: {} as never });
  const message = sampleMessage();
  await channel.send({ endpoint: `${sink.url}/in`, headers: { 'x-receiver': 'yes' } }, message, { signal: AbortSignal.timeout(5_000), signingSecret: secret });
  const req = sink.requests[0]!;
  t.equal(req.headers['webhook-id'], message.id, 'webhook-id is the delivery id (the same on a retry)');
  t.equal(req.headers['x-receiver'], 'yes', 'the user\'s headers are sent');
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
  t.same(new Webhook(secret).verify(req.body, headers), JSON.parse(req.body), 'standardwebhooks verifies it');
  t.ok(verify(secret, req.headers, req.body), 'the README snippet verifies it');
  t.notOk(verify(secret, req.headers, req.body.replace('shop-web', 'shop-wEb')), 'a changed body does not verify');
  t.notOk(verify('whsec_' + Buffer.from('another secret').toString('base64'), req.headers, req.body), 'another secret does not verify');
  t.throws(() => new Webhook('whsec_' + Buffer.from('another secret').toString('base64')).verify(req.body, headers), 'nor with the library');
  const body = JSON.parse(req.body);
  t.equal(body.type, 'appBuildError');
  t.equal(body.data.appName, 'shop-web', 'the event\'s payload is the data');
  t.equal(body.data.title, 'Build failed: shop-web');
});

t.test('headers that would break the signature are refused, naming the field', async t => {
  const channel = await descriptor.create({}, { config: {} as never });
  t.equal(fieldOf(() => channel.validate!({ endpoint: 'https://x.example/', headers: { 'Webhook-Signature': 'v1,forged' } })), 'headers.Webhook-Signature');
  t.equal(fieldOf(() => channel.validate!({ endpoint: 'https://x.example/', headers: { 'bad name': 'v' } })), 'headers.bad name');
  t.equal(fieldOf(() => channel.validate!({ endpoint: 'ftp://x.example/' })), 'endpoint');
});
