// Outbound URLs given by users (issue 46), two organizations on one Berth: A is the instance
// operators' (the first), B another owner's. B's notification, monitoring, registry, backup
// destination, git provider and AI URLs at loopback, link-local (cloud metadata), a private
// address and this machine's own address are refused (400 naming the field) before any
// connection: the sink records nothing and a connect spy sees no attempt. A's same calls to a
// private address are accepted; with outboundAllow listing the sink, B's test send reaches it.
// A name resolving to loopback is refused (DNS rebinding), and the guard connects to the address
// it checked. Answers and the delivery log keep the status and a vendor's message, never a body.
// An event with no organization reaches only A's channel. Nothing here connects outside loopback.
import net from 'node:net';
import os from 'node:os';
import t, { type Test } from 'tap';
import { OutboundGuard, addressKind } from '@berth/core';
import { startTestServer, signUpAdmin, otherOrganization, startHttpSink, waitFor, sleep, type Reply } from '@berth/core/testing';

const sink = await startHttpSink(t);
const sinkPort = new URL(sink.url).port;

// Every TCP connection this process starts (the kernel runs in it), by the host it was given.
const connects: string[] = [];
const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const first = args[0] as { host?: string; port?: number; path?: string } | number | unknown[];
  if (Array.isArray(first)) connects.push(String((first[0] as { host?: string })?.host ?? ''));
  else if (typeof first === 'object' && first) connects.push(String(first.host ?? first.path ?? ''));
  else connects.push(String(args[1] ?? 'localhost'));
  return realConnect.apply(this, args as never); // cast: the spy passes Node's overloads through unchanged
} as typeof realConnect;
t.teardown(() => {
  net.Socket.prototype.connect = realConnect;
});

/** This machine's first address that is neither loopback nor link-local (absent on a machine without one). */
const machineAddress = Object.values(os.networkInterfaces())
  .flat()
  .find(i => i && !i.internal && i.family === 'IPv4' && !i.address.startsWith('169.254.'))?.address;

const PRIVATE = '10.255.255.1';
const METADATA = '169.254.169.254';
/** The addresses refused to B, each with the kind its refusal names. */
const refusedHosts: [string, RegExp][] = [
  [`127.0.0.1:${sinkPort}`, /a loopback address/],
  [METADATA, /a link-local address/],
  [PRIVATE, /a private address.*instance operators' organization/],
  ...(machineAddress ? ([[machineAddress, /a (this machine|private) address/]] as [string, RegExp][]) : []),
];

const notContacted = (t: Test, hosts: string[]) => {
  for (const h of hosts)
    t.notOk(
      connects.some(c => c === h || c === `[${h}]`),
      `no connection to ${h} was attempted`,
    );
};

function refused(t: Test, reply: Reply, field: string, kind: RegExp, what: string) {
  t.equal(reply.status, 400, `${what}: 400 (${JSON.stringify(reply.body).slice(0, 300)})`);
  const issue = (reply.body?.issues ?? []).find((i: { path: string[] }) => i.path.join('.') === field);
  t.ok(issue, `${what}: the refusal names ${field}`);
  t.match(issue?.message ?? '', kind, `${what}: says why`);
  t.match(issue?.message ?? '', /outboundAllow/, `${what}: says how the operator allows it`);
}

const server = await startTestServer({ proxy: 'none', outboundAllow: [], notifyTimeoutSeconds: 2, notifyMaxTries: 1 } as never);
t.teardown(() => server.destroy());
const a = await signUpAdmin(server);
const b = await otherOrganization(server, a.userId);
const cradle = server.kernel.container.cradle as any;

const toggles = { appBuildError: false, databaseBackup: false, dokployRestart: false, appDeploy: false, dockerCleanup: false, volumeBackup: false, dokployBackup: false, serverThreshold: true };
const bServer = await b.client.post('server.create', { name: 'b-host', ipAddress: '192.0.2.10', port: 22, sshKeyId: null });
const monitoring = (urlCallback: string) => ({
  server: { refreshRate: 3600, port: 4599, token: 'b-token', urlCallback, retentionDays: 1, cronJob: '0 0 * * *', thresholds: { cpu: 100, memory: 100 } },
  containers: { refreshRate: 3600, services: { include: [], exclude: [] } },
});

t.test('the guard: kinds, every resolved address checked, the checked address connected to, checked again at send', async t => {
  t.equal(addressKind('127.0.0.1'), 'loopback');
  t.equal(addressKind('::ffff:127.0.0.1'), 'loopback', 'IPv4-mapped IPv6 unwrapped');
  t.equal(addressKind('169.254.169.254'), 'link-local');
  t.equal(addressKind('fe80::1'), 'link-local');
  t.equal(addressKind('0.0.0.0'), 'unspecified');
  for (const a of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', 'fd00::1']) t.equal(addressKind(a, new Set()), 'private', a);
  t.equal(addressKind('93.184.216.34', new Set(['93.184.216.34'])), 'this machine', "this machine's own public address");
  t.equal(addressKind('93.184.216.34', new Set()), 'public');

  let allow: string[] = [];
  const names: Record<string, string[]> = { 'rebind.test': ['93.184.216.34', '127.0.0.1'], 'metadata.test': [METADATA], 'sink.test': ['127.0.0.1'] };
  const guard = new OutboundGuard({ allow: () => allow, instanceOrganization: async () => null, resolver: async host => (names[host] ?? []).map(address => ({ address, family: net.isIP(address) })) });
  const req = { field: 'webhookUrl', organizationId: 'org-b' };
  await t.rejects(
    guard.check('http://rebind.test/', req),
    { name: 'BerthError', issues: [{ path: ['webhookUrl'], message: /127\.0\.0\.1 \(the address of rebind\.test\), a loopback address/ }] },
    'one loopback address among public ones is refused',
  );
  await t.rejects(guard.check('https://metadata.test/latest', req), { name: 'BerthError', issues: [{ message: /169\.254\.169\.254 .*link-local/ }] }, 'a name resolving to the metadata address');
  await t.rejects(guard.check(`http://${PRIVATE}/`, req), { name: 'BerthError', issues: [{ message: /private/ }] }, 'private: refused to an organization that is not the instance operators');

  const before = connects.length;
  await t.rejects(guard.fetch(req)(`http://${METADATA}/latest/meta-data/`), { name: 'BerthError', issues: [{ path: ['webhookUrl'] }] });
  await t.rejects(guard.fetch(req)(`http://metadata.test/latest/meta-data/`), { name: 'BerthError', issues: [{ path: ['webhookUrl'] }] });
  t.equal(connects.length, before, 'refused before any connection');
  notContacted(t, [METADATA, 'metadata.test']);

  // Listed, the loopback sink is reached under a name no DNS knows: the connection went to the address the guard checked.
  allow = [`127.0.0.1:${sinkPort}`];
  const res = await guard.fetch(req)(`http://sink.test:${sinkPort}/pinned`, { method: 'POST', body: '{}' });
  t.equal(res.status, 200);
  t.equal(sink.to('/pinned').length, 1, 'the sink received it');
  t.equal(sink.to('/pinned')[0]!.headers.host, `sink.test:${sinkPort}`, 'with the name as Host');
  t.ok(guard.listedAddress('127.0.0.1', sinkPort) && !guard.listedAddress('127.0.0.1', '1'), 'an entry with a port allows that port only');
  allow = ['127.0.0.0/8'];
  t.ok(guard.listedAddress('127.9.9.9', '80'), 'a CIDR entry');
  allow = ['sink.test'];
  await t.rejects(guard.check(`http://sink.test:${sinkPort}/`, req), { name: 'BerthError', issues: [{ message: /loopback/ }] }, 'a listed name does not vouch for the address it resolves to');

  // Checked again at send: the rule changed (or the name moved) since the URL was saved.
  allow = [];
  await t.rejects(guard.fetch(req)(`http://sink.test:${sinkPort}/again`), { name: 'BerthError', issues: [{ path: ['webhookUrl'] }] });
  t.equal(sink.to('/again').length, 0, 'nothing sent');
});

/** Each feature's call with a URL at `host`, and the field a refusal names. */
const features: { what: string; field: string; call: (c: typeof a.client, host: string) => Promise<Reply> }[] = [
  { what: 'notification.createSlack', field: 'webhookUrl', call: (c, h) => c.post('notification.createSlack', { name: 's', ...toggles, webhookUrl: `http://${h}/slack/T/B/x` }) },
  { what: 'notification.testSlackConnection', field: 'webhookUrl', call: (c, h) => c.post('notification.testSlackConnection', { webhookUrl: `http://${h}/slack/T/B/x` }) },
  { what: 'notification.createCustom', field: 'endpoint', call: (c, h) => c.post('notification.createCustom', { name: 'c', ...toggles, endpoint: `http://${h}/hook` }) },
  {
    what: 'notification.createEmail',
    field: 'smtpServer',
    call: (c, h) =>
      c.post('notification.createEmail', {
        name: 'e',
        ...toggles,
        smtpServer: h.split(':')[0],
        smtpPort: 25,
        username: 'u',
        password: 'p',
        fromAddress: 'a@example.com',
        toAddresses: ['b@example.com'],
      }),
  },
  {
    what: 'server.setupMonitoring',
    field: 'metricsConfig.server.urlCallback',
    call: (c, h) => c.post('server.setupMonitoring', { serverId: bServer.body.serverId, metricsConfig: monitoring(`http://${h}/alerts`) }),
  },
  {
    what: 'registry.create',
    field: 'registryUrl',
    call: (c, h) => c.post('registry.create', { registryName: 'r', username: 'u', password: 'p', registryUrl: h, registryType: 'cloud', imagePrefix: null }),
  },
  {
    what: 'destination.create',
    field: 'endpoint',
    call: (c, h) => c.post('destination.create', { name: 'd', provider: 'AWS', bucket: 'b', endpoint: `http://${h}`, region: 'us-east-1', accessKey: 'a', secretAccessKey: 's' }),
  },
  {
    what: 'destination.testConnection',
    field: 'endpoint',
    call: (c, h) => c.post('destination.testConnection', { name: 'd', provider: 'AWS', bucket: 'b', endpoint: `http://${h}`, region: 'us-east-1', accessKey: 'a', secretAccessKey: 's' }),
  },
  { what: 'gitea.create', field: 'giteaUrl', call: (c, h) => c.post('gitea.create', { name: 'g', giteaUrl: `http://${h}` }) },
  { what: 'ai.create', field: 'apiUrl', call: (c, h) => c.post('ai.create', { name: 'ai', apiUrl: `http://${h}/v1`, apiKey: 'k', model: 'm', isEnabled: true }) },
];

t.test("B's URLs at loopback, link-local, private and this machine's address: 400 naming the field, nothing sent", async t => {
  t.equal(bServer.status, 200, JSON.stringify(bServer.body));
  for (const f of features) {
    for (const [host, kind] of refusedHosts) refused(t, await f.call(b.client, host), f.field, kind, `${f.what} at ${host}`);
  }
  t.equal(sink.requests.filter(r => !r.path.startsWith('/pinned')).length, 0, 'the sink received nothing');
  notContacted(t, [METADATA, PRIVATE, ...(machineAddress ? [machineAddress] : [])]);
  t.same((await b.client.get('notification.all')).body, [], 'no channel of B was stored');
});

t.test('DNS rebinding: a name resolving to loopback is refused', async t => {
  const r = await b.client.post('notification.createSlack', { name: 's', ...toggles, webhookUrl: `http://localhost:${sinkPort}/slack/T/B/x` });
  refused(t, r, 'webhookUrl', /(127\.0\.0\.1|::1) \(the address of localhost\), a loopback address/, 'localhost');
  t.equal(sink.requests.filter(r => !r.path.startsWith('/pinned')).length, 0, 'the sink received nothing');
});

t.test("A (the instance operators' organization) may use a private address; loopback and link-local stay refused", async t => {
  for (const f of features.filter(f => !/test|setupMonitoring/.test(f.what))) {
    const r = await f.call(a.client, PRIVATE);
    t.equal(r.status, 200, `${f.what} at ${PRIVATE} by A: ${JSON.stringify(r.body).slice(0, 200)}`);
    refused(t, await f.call(a.client, METADATA), f.field, /link-local/, `${f.what} at ${METADATA} by A`);
  }
  notContacted(t, [PRIVATE, METADATA]);
});

t.test('with outboundAllow listing the sink, B reaches it; answers keep the status and the vendor message only', async t => {
  // The operator's key, as BERTH_OUTBOUND_ALLOW gives it at boot (read on every check).
  cradle.config.outboundAllow = [`127.0.0.1:${sinkPort}`];
  t.teardown(() => {
    cradle.config.outboundAllow = [];
  });
  const test = await b.client.post('notification.testSlackConnection', { webhookUrl: `${sink.url}/b-test/T/B/x` });
  t.equal(test.status, 200, JSON.stringify(test.body));
  t.equal(sink.to('/b-test').length, 1, 'the sink received the test message');

  sink.plan({ status: 500, body: '<html>internal admin page: db password hunter2</html>' });
  const html = await b.client.post('notification.testSlackConnection', { webhookUrl: `${sink.url}/b-test/T/B/x` });
  t.equal(html.status, 400);
  t.match(html.body.message, /Slack answered 500/);
  t.notMatch(JSON.stringify(html.body), /hunter2|html/, 'an arbitrary body is not quoted');
  sink.plan({ status: 404, body: 'no_service' });
  const vendor = await b.client.post('notification.testSlackConnection', { webhookUrl: `${sink.url}/b-test/T/B/x` });
  t.match(vendor.body.message, /Slack answered 404: no_service/, "Slack's error code is kept");

  const monitored = await b.client.post('server.setupMonitoring', { serverId: bServer.body.serverId, metricsConfig: monitoring(`${sink.url}/alerts`) });
  t.equal(monitored.status, 200, `B's urlCallback at the listed sink: ${JSON.stringify(monitored.body).slice(0, 200)}`);
});

t.test('an event with no organization reaches only the instance operators; the delivery log keeps no body', async t => {
  cradle.config.outboundAllow = [`127.0.0.1:${sinkPort}`];
  t.teardown(() => {
    cradle.config.outboundAllow = [];
  });
  const mine = await a.client.post('notification.createSlack', { name: 'a', ...toggles, webhookUrl: `${sink.url}/to-a/T/B/x` });
  const theirs = await b.client.post('notification.createSlack', { name: 'b', ...toggles, webhookUrl: `${sink.url}/to-b/T/B/x` });
  t.equal(mine.status, 200);
  t.equal(theirs.status, 200);
  sink.setDefault({ status: 200, body: '{"internal":"hunter2"}' });
  t.teardown(() => sink.setDefault({ status: 200, body: '{"ok":true}' }));
  const threshold = (organizationId: string | null, serverName: string) =>
    cradle.events.emitDurable('serverThreshold', {
      organizationId,
      serverId: null,
      serverName,
      type: 'CPU',
      value: 99,
      threshold: 90,
      message: 'CPU high',
      state: 'alert',
      at: new Date().toISOString(),
    });
  await threshold(null, 'Berth');
  await waitFor("A's channel hears this machine's threshold", () => sink.to('/to-a').length === 1);
  // B's own event reaches B, so B's channel works: hearing nothing of this machine's is the rule.
  await threshold(b.organizationId, 'b-host');
  await waitFor("B's channel hears its own server's threshold", () => sink.to('/to-b').length === 1);
  await sleep(500);
  t.equal(sink.to('/to-a').length, 1, "A heard this machine's event once");
  t.equal(sink.to('/to-b').length, 1, "B heard only its own server's event");
  t.match(sink.to('/to-b')[0]!.body, /b-host/);

  const log = await waitFor('the delivery is logged', async () => {
    const r = await a.client.get('notification.deliveries', { notificationId: mine.body.notificationId });
    return r.body?.[0]?.state === 'sent' ? r.body : null;
  });
  t.same(log[0].answer, { status: 200, body: '' }, 'the status, never the body');
});
