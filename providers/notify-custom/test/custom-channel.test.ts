import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { channelConformance, httpChannelTarget, sampleMessage, startHttpSink } from '@berth/core/testing';
import { fieldOf } from '@berth/core/testing';
import descriptor from '../src/index.ts';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

channelConformance(t, descriptor, async () => {
  const sink = await startHttpSink(t);
  return httpChannelTarget(sink, { endpoint: `${sink.url}/hooks/berth?token=abc`, headers: { authorization: 'Bearer receiver' } });
});

/** The verification snippet of Berth's documentation (docs/notifications.md, section "Signed custom webhooks"), run as a receiver would copy it. */
async function documentedSnippet(): Promise<(secret: string, headers: Record<string, unknown>, body: string) => boolean> {
  const page = readFileSync(new URL('../../../docs/notifications.md', import.meta.url), 'utf8');
  const block = /```js\n([\s\S]*?export function verifyBerthWebhook[\s\S]*?)```/.exec(page)?.[1];
  if (!block) throw new Error('docs/notifications.md has no verifyBerthWebhook snippet');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-snippet-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'verify.mjs'), block);
  return (await import(pathToFileURL(path.join(dir, 'verify.mjs')).href)).verifyBerthWebhook;
}
const verify = await documentedSnippet();

t.test('a signed delivery verifies with the Standard Webhooks library and with the documented snippet (docs/notifications.md)', async t => {
  const sink = await startHttpSink(t);
  const channel = await descriptor.create({}, { config: {} as never });
  const message = sampleMessage();
  await channel.send({ endpoint: `${sink.url}/in`, headers: { 'x-receiver': 'yes' } }, message, { signal: AbortSignal.timeout(5_000), signingSecret: secret });
  const req = sink.requests[0]!;
  t.equal(req.headers['webhook-id'], message.id, 'webhook-id is the delivery id (the same on a retry)');
  t.equal(req.headers['x-receiver'], 'yes', "the user's headers are sent");
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
  t.same(new Webhook(secret).verify(req.body, headers), JSON.parse(req.body), 'standardwebhooks verifies it');
  t.ok(verify(secret, req.headers, req.body), 'the documented snippet verifies it');
  t.notOk(verify(secret, { ...req.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) }, req.body), 'an hour-old timestamp does not');
  t.notOk(verify(secret, req.headers, req.body.replace('shop-web', 'shop-wEb')), 'a changed body does not verify');
  t.notOk(verify('whsec_' + Buffer.from('another secret').toString('base64'), req.headers, req.body), 'another secret does not verify');
  t.throws(
    () => new Webhook('whsec_' + Buffer.from('another secret').toString('base64')).verify(req.body, headers),
    { name: 'WebhookVerificationError', message: /No matching signature/ },
    'nor with the library',
  );
  const body = JSON.parse(req.body);
  t.equal(body.type, 'appBuildError');
  t.equal(body.data.appName, 'shop-web', "the event's payload is the data");
  t.equal(body.data.title, 'Build failed: shop-web');
});

t.test('headers that would break the signature are refused, naming the field', async t => {
  const channel = await descriptor.create({}, { config: {} as never });
  t.equal(
    fieldOf(() => channel.validate!({ endpoint: 'https://x.example/', headers: { 'Webhook-Signature': 'v1,forged' } })),
    'headers.Webhook-Signature',
  );
  t.equal(
    fieldOf(() => channel.validate!({ endpoint: 'https://x.example/', headers: { 'bad name': 'v' } })),
    'headers.bad name',
  );
  t.equal(
    fieldOf(() => channel.validate!({ endpoint: 'https://x.example/', headers: { ['x'.repeat(300)]: 'v' } })),
    `headers.${'x'.repeat(64)}`,
    'a header name longer than 256 characters',
  );
  t.equal(
    fieldOf(() => channel.validate!({ endpoint: 'ftp://x.example/' })),
    'endpoint',
  );
  t.equal(
    fieldOf(() => channel.validate!({ endpoint: 'https://x.example/', headers: { 'x-token': 'a\r\nInjected: yes' } })),
    'headers.x-token',
    'a header value cannot smuggle another header',
  );
});
