// notification.* end to end on a real kernel: channels created with both API variants' bodies,
// secrets never answered, events delivered through the outbox to a loopback HTTP sink and a real
// SMTP server, retries with backoff, dead after notifyMaxTries, test operations that quote the
// provider with its secrets redacted, signed webhooks, the delivery log, receiveNotification.
import t from 'tap';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { addMember, makeCertificate, otherOrganization, signUpAdmin, startHttpSink, startSmtp, startTestServer, waitFor, Client, type TestServer } from '@berth/core/testing';

t.setTimeout(240_000);

const sink = await startHttpSink(t);
const cert = makeCertificate(t);
const smtp = await startSmtp(t, cert, 'starttls');
const server: TestServer = await startTestServer({
  proxy: 'none',
  // The plugin's own keys (section notification): a short timeout and three tries.
  notifyTimeoutSeconds: 2,
  notifyMaxTries: 3,
  providers: { notify: { telegram: { options: { apiUrl: `${sink.url}/telegram` } }, email: { options: { caFile: cert.certFile } } } } as never,
});
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const c = admin.client;
const cradle = server.kernel.container.cradle as any;
const db = new pg.Client(server.database);
await db.connect();
db.on('error', () => {}); // the last test stops the server under it
let dbOpen = true;
t.teardown(() => (dbOpen ? db.end() : undefined));

const olderToggles = { appBuildError: true, databaseBackup: true, platformRestart: false, appDeploy: true, dockerCleanup: false };
const currentToggles = { appBuildError: true, databaseBackup: true, dokployRestart: false, appDeploy: false, dockerCleanup: false, volumeBackup: true, dokployBackup: false, serverThreshold: false };
const emitBuildError = (appName: string, organizationId = admin.organizationId) =>
  cradle.events.emit('appBuildError', {
    applicationId: 'app-that-is-not-stored',
    organizationId,
    appName,
    deploymentId: 'dep1',
    error: `npm ERR! ${appName} missing script: build`,
    at: new Date().toISOString(),
  });
const bodiesTo = (prefix: string) => sink.to(prefix).map(r => r.body);
const deliveries = async (notificationId: string) => {
  const r = await c.get('notification.deliveries', { notificationId });
  if (r.status !== 200) throw new Error(`deliveries: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as any[];
};
/** Moves a pending delivery's next try to now (the backoff is 10 s and up) and wakes the worker. */
const skipBackoff = async (notificationId: string) => {
  await db.query(`update notification_deliveries set next_attempt_at = now() where notification_id = $1 and state = 'pending'`, [notificationId]);
  cradle.notificationOutbox.wake();
};

let slack: any, discord: any, custom: any, email: any;

t.test('both create bodies are accepted; answers carry both names of the restart toggle and no secret', async t => {
  const s = await c.post('notification.createSlack', { name: 'slack', ...olderToggles, webhookUrl: `${sink.url}/slack/T0/B0/slack-token-xyz`, channel: '#ops' });
  t.equal(s.status, 200, JSON.stringify(s.body));
  slack = s.body;
  t.equal(slack.notificationType, 'slack');
  t.equal(slack.platformRestart, false);
  t.equal(slack.dokployRestart, false, "the older body's platformRestart answered under both names");
  t.equal(slack.appHealth, true, 'appHealth follows appBuildError when absent');
  t.equal(slack.volumeBackup, false, 'a toggle of the current variant defaults to false');
  t.match(slack.slack, { slackId: slack.slackId, channel: '#ops', webhookUrl: `${sink.url}/********` }, 'the webhook URL answered masked');
  t.equal(slack.discordId, null);
  t.equal(slack.discord, null);

  const d = await c.post('notification.createDiscord', {
    name: 'discord',
    ...currentToggles,
    dokployRestart: true,
    webhookUrl: `${sink.url}/discord/api/webhooks/1/discord-token-xyz`,
    decoration: true,
  });
  t.equal(d.status, 200, JSON.stringify(d.body));
  discord = d.body;
  t.equal(discord.platformRestart, true, "the current body's dokployRestart answered under both names");
  t.equal(discord.volumeBackup, true);

  const missing = await c.post('notification.createSlack', { name: 'x', appBuildError: true, databaseBackup: true, appDeploy: true, dockerCleanup: false, webhookUrl: `${sink.url}/x` });
  t.equal(missing.status, 400, 'neither platformRestart nor dokployRestart: refused');
  t.match(JSON.stringify(missing.body.issues), 'dokployRestart');
  const differ = await c.post('notification.createSlack', { name: 'x', ...olderToggles, dokployRestart: true, webhookUrl: `${sink.url}/x` });
  t.equal(differ.status, 400, 'both names with different values: refused');
  const badUrl = await c.post('notification.createSlack', { name: 'x', ...olderToggles, webhookUrl: 'not a url' });
  t.equal(badUrl.status, 400);
  t.match(JSON.stringify(badUrl.body.issues), 'webhookUrl');

  const all = await c.get('notification.all');
  t.equal(all.status, 200);
  t.same(
    all.body.map((n: any) => n.name),
    ['discord', 'slack'],
    'newest first',
  );
  t.notMatch(JSON.stringify(all.body), /slack-token-xyz|discord-token-xyz/, 'no webhook token in any answer');
});

t.test('update: a masked secret sent back keeps its value; the channel record id must match', async t => {
  const one = (await c.get('notification.one', { notificationId: slack.notificationId })).body;
  const same = await c.post('notification.updateSlack', { notificationId: slack.notificationId, slackId: slack.slackId, webhookUrl: one.slack.webhookUrl, name: 'slack ops', appDeploy: false });
  t.equal(same.status, 200, JSON.stringify(same.body));
  t.equal(same.body.name, 'slack ops');
  t.equal(same.body.appDeploy, false);
  const wrong = await c.post('notification.updateSlack', { notificationId: slack.notificationId, slackId: discord.discordId, name: 'x' });
  t.equal(wrong.status, 400);
  t.match(JSON.stringify(wrong.body.issues), 'slackId');
  const kind = await c.post('notification.updateDiscord', { notificationId: slack.notificationId, discordId: slack.slackId });
  t.equal(kind.status, 400, 'updateDiscord of a slack channel');
});

t.test('an event reaches every subscribed channel, the webhook signed; a toggle off sends nothing', async t => {
  const cu = await c.post('notification.createCustom', {
    name: 'hook',
    ...currentToggles,
    appDeploy: true,
    endpoint: `${sink.url}/custom/in?key=custom-key-123`,
    headers: { authorization: 'Bearer receiver-secret' },
  });
  t.equal(cu.status, 200, JSON.stringify(cu.body));
  custom = cu.body;
  t.match(custom.signingSecret, /^whsec_[A-Za-z0-9+/=]{32}$/, 'createCustom answers the signing secret');
  const again = await c.get('notification.one', { notificationId: custom.notificationId });
  t.notOk('signingSecret' in again.body, 'and never again');
  t.notMatch(JSON.stringify(again.body), /custom-key-123|receiver-secret|whsec_/, "the endpoint's key and the headers are masked");
  t.same(again.body.custom.headers, { authorization: '********' });

  const e = await c.post('notification.createEmail', {
    name: 'mail',
    ...olderToggles,
    smtpServer: '127.0.0.1',
    smtpPort: smtp.port,
    username: 'berth',
    password: 'mail-secret',
    fromAddress: 'berth@example.com',
    toAddresses: ['ops@example.com'],
    tlsMode: 'starttls',
  });
  t.equal(e.status, 200, JSON.stringify(e.body));
  email = e.body;
  t.equal(email.email.password, '********');
  t.equal(email.email.tlsMode, 'starttls');

  const before = sink.requests.length;
  const started = Date.now();
  emitBuildError('shop-web');
  await waitFor(
    'the build failure at slack, discord, the webhook and the mailbox',
    () =>
      bodiesTo('/slack').some(b => b.includes('shop-web')) &&
      bodiesTo('/discord').some(b => b.includes('shop-web')) &&
      bodiesTo('/custom').some(b => b.includes('shop-web')) &&
      smtp.mails.some(m => m.includes('shop-web')),
    { timeout: 5_000 },
  );
  t.ok(Date.now() - started < 5_000, `delivered within 5 s (${Date.now() - started} ms)`);
  t.equal(sink.requests.length - before, 3, 'one request per HTTP channel');
  t.match(bodiesTo('/slack').at(-1), 'npm ERR! shop-web missing script: build', 'the message says what failed');

  const hook = sink.to('/custom').at(-1)!;
  const headers = Object.fromEntries(Object.entries(hook.headers).map(([k, v]) => [k, String(v)]));
  t.equal(headers.authorization, 'Bearer receiver-secret', "the user's header is sent");
  const payload = new Webhook(custom.signingSecret).verify(hook.body, headers) as any;
  t.equal(payload.type, 'appBuildError', 'the signature verifies with the signing secret');
  t.equal(payload.data.appName, 'shop-web');

  await waitFor('the log says sent', async () => (await deliveries(slack.notificationId))[0]?.state === 'sent');
  const [log] = await deliveries(slack.notificationId);
  t.match(log, { event: 'appBuildError', title: 'Build failed: shop-web', state: 'sent', tries: 1, answer: { status: 200 } });
  t.equal(log.nextAttemptAt, null);

  // appDeploy: slack turned it off above, discord never had it; the webhook and the mail have it.
  const count = sink.requests.length;
  cradle.events.emit('appDeploy', {
    applicationId: 'x',
    organizationId: admin.organizationId,
    appName: 'shop-api',
    deploymentId: 'd2',
    image: 'shop:2',
    action: 'deploy',
    at: new Date().toISOString(),
  });
  await waitFor('the deploy at the webhook', () => bodiesTo('/custom').some(b => b.includes('shop-api')));
  await waitFor('and in the mailbox', () => smtp.mails.some(m => m.includes('shop-api')));
  t.equal(sink.requests.length - count, 1, 'only the webhook of the HTTP channels: the toggles off sent nothing');
  t.equal((await deliveries(slack.notificationId)).length, 1, 'no delivery stored for a channel whose toggle is off');

  const rotated = await c.post('notification.updateCustom', { notificationId: custom.notificationId, customId: custom.customId, rotateSecret: true });
  t.equal(rotated.status, 200);
  t.match(rotated.body.signingSecret, /^whsec_/);
  t.not(rotated.body.signingSecret, custom.signingSecret, 'rotateSecret makes a new secret');
  emitBuildError('after-rotation');
  await waitFor('the next delivery', () => sink.to('/custom').some(r => r.body.includes('after-rotation')));
  const next = sink.to('/custom').find(r => r.body.includes('after-rotation'))!;
  const h2 = Object.fromEntries(Object.entries(next.headers).map(([k, v]) => [k, String(v)]));
  t.ok(new Webhook(rotated.body.signingSecret).verify(next.body, h2), 'signed with the new secret');
  t.throws(() => new Webhook(custom.signingSecret).verify(next.body, h2), { name: 'WebhookVerificationError', message: /No matching signature/ }, 'not with the old one');
});

t.test('a provider that fails twice then answers gets the message once; backoff 10 s, then 20 s', async t => {
  await c.post('notification.updateDiscord', { notificationId: discord.notificationId, discordId: discord.discordId, appBuildError: false });
  await c.post('notification.updateCustom', { notificationId: custom.notificationId, customId: custom.customId, appBuildError: false });
  await c.post('notification.updateEmail', { notificationId: email.notificationId, emailId: email.emailId, appBuildError: false });
  // Slack's API answers its errors as {"ok":false,"error":…}: that message is kept; a proxy's HTML page is not.
  sink.plan({ status: 500, body: JSON.stringify({ ok: false, error: 'slack-token-xyz is broken' }) }, { status: 502, body: '<html>internal-admin-panel</html>' });
  emitBuildError('flaky');
  // A delivery is pending from the moment it is queued (no try yet): the first failure is the pending one tried once.
  const first = await waitFor('the first failure recorded', async () => (await deliveries(slack.notificationId)).find(d => d.title.includes('flaky') && d.tries === 1 && d.state === 'pending'));
  t.equal(first.answer.status, 500);
  t.notMatch(first.answer.body, 'slack-token-xyz', "the provider's answer is kept redacted");
  t.equal(first.answer.body, 'Slack answered 500: [redacted] is broken', "the vendor's error message, redacted");
  const wait1 = Date.parse(first.nextAttemptAt) - Date.parse(first.lastAttemptAt);
  t.ok(wait1 >= 9_900 && wait1 <= 10_500, `the first retry 10 s later (${wait1} ms)`);
  await skipBackoff(slack.notificationId);
  const second = await waitFor('the second failure', async () => (await deliveries(slack.notificationId)).find(d => d.title.includes('flaky') && d.tries === 2 && d.state === 'pending'));
  t.equal(second.answer.body, 'Slack answered 502', 'an answer without a vendor message keeps only the status, none of its body');
  const wait2 = Date.parse(second.nextAttemptAt) - Date.parse(second.lastAttemptAt);
  t.ok(wait2 >= 19_900 && wait2 <= 20_500, `the second 20 s later (${wait2} ms)`);
  await skipBackoff(slack.notificationId);
  const sent = await waitFor('sent on the third try', async () => (await deliveries(slack.notificationId)).find(d => d.title.includes('flaky') && d.state === 'sent'));
  t.equal(sent.tries, 3);
  t.equal(sink.to('/slack').filter(r => r.body.includes('flaky')).length, 3, 'three tries reached the provider');
  t.equal(sink.to('/slack').filter(r => r.body.includes('flaky')).length - 2, 1, 'of which one was accepted: the message arrived once');
});

t.test('a provider that always fails: dead after notifyMaxTries (3 here); a hanging one times out', async t => {
  sink.plan({ status: 503 }, 'hang', { status: 500 });
  emitBuildError('doomed');
  const answers: any[] = [];
  for (let i = 1; i <= 3; i++) {
    const d = await waitFor(`try ${i}`, async () => (await deliveries(slack.notificationId)).find(d => d.title.includes('doomed') && d.tries === i && d.state !== 'sending'), { timeout: 10_000 });
    answers.push(d.answer);
    await skipBackoff(slack.notificationId);
  }
  t.same(answers[1], { status: null, body: 'Slack did not answer within 2 s' }, 'the hanging try ended at the timeout (notifyTimeoutSeconds)');
  const dead = (await deliveries(slack.notificationId)).find(d => d.title.includes('doomed'))!;
  t.match(dead, { state: 'dead', tries: 3, nextAttemptAt: null, answer: { status: 500 } });
  t.equal(sink.to('/slack').filter(r => r.body.includes('doomed')).length, 3, 'no fourth try');
});

t.test("test*Connection sends for real and quotes the provider, secrets redacted, never as Berth's 401", async t => {
  sink.plan({ status: 401, body: '{"ok":false,"error_code":401,"description":"Unauthorized: token 123456:wrong-bot-token rejected"}' });
  const tg = await c.post('notification.testTelegramConnection', { botToken: '123456:wrong-bot-token', chatId: '42' });
  t.equal(tg.status, 400, 'BAD_REQUEST, not 401');
  t.equal(tg.body.code, 'BAD_REQUEST');
  t.match(tg.body.message, /^Telegram answered 401: /, "Telegram's status quoted");
  t.notMatch(tg.body.message, 'wrong-bot-token', 'the token is absent from the message');
  t.match(tg.body.message, '[redacted]');
  t.match(sink.to('/telegram').at(-1)!.path, '/telegram/bot123456%3Awrong-bot-token/sendMessage', 'the request did go out');

  sink.plan({ status: 200, body: '{"ok":true,"result":{}}' });
  const ok = await c.post('notification.testTelegramConnection', { botToken: '123456:good', chatId: '42', messageThreadId: '' });
  t.equal(ok.status, 200, JSON.stringify(ok.body));
  t.equal(ok.body, true);

  sink.plan({ status: 403, body: 'invalid_token' });
  const sl = await c.post('notification.testSlackConnection', { webhookUrl: `${sink.url}/slack/T/B/other-token-abc`, channel: '' });
  t.equal(sl.status, 400, "a provider's 403 is not Berth's 403");
  t.equal(sl.body.message, 'Slack answered 403: invalid_token');

  sink.plan('hang');
  const started = Date.now();
  const hung = await c.post('notification.testDiscordConnection', { webhookUrl: `${sink.url}/discord/hang` });
  t.equal(hung.status, 400);
  t.match(hung.body.message, 'did not answer within 2 s');
  t.ok(Date.now() - started < 5_000, 'given up at the timeout');

  const mail = await c.post('notification.testEmailConnection', {
    smtpServer: '127.0.0.1',
    smtpPort: smtp.port,
    username: 'berth',
    password: 'wrong-mail-password',
    fromAddress: 'berth@example.com',
    toAddresses: ['ops@example.com'],
  });
  t.equal(mail.status, 400);
  t.match(mail.body.message, /535/, 'the SMTP reply code quoted');
  t.notMatch(mail.body.message, 'wrong-mail-password');
  const mailOk = await c.post('notification.testEmailConnection', {
    smtpServer: '127.0.0.1',
    smtpPort: smtp.port,
    username: 'berth',
    password: 'mail-secret',
    fromAddress: 'berth@example.com',
    toAddresses: ['ops@example.com'],
  });
  t.equal(mailOk.status, 200, JSON.stringify(mailOk.body));
  t.ok(smtp.mails.some(m => m.includes('Test notification from Berth')));

  const customTest = await c.post('notification.testCustomConnection', { endpoint: `${sink.url}/custom/test` });
  t.equal(customTest.status, 200);
  t.ok(sink.to('/custom/test').at(-1)!.headers['webhook-signature'], 'a test webhook is signed too');
});

t.test('another organization sees none of it; receiveNotification with a wrong token is 401', async t => {
  const other = await otherOrganization(server, admin.userId);
  // Every operation that takes a notificationId, from the document: another organization's call is 404.
  const doc = (await c.get('settings.getOpenApiDocument')).body;
  const byId = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(
    ([p, m]) => p.startsWith('/notification.') && JSON.stringify(m.post?.requestBody ?? m.get?.parameters ?? {}).includes('"notificationId"'),
  );
  t.equal(byId.length, 15, 'update<Channel> of the twelve channels, remove, one, deliveries: each takes a notificationId');
  const answered: string[] = [];
  for (const [p, methods] of byId) {
    const op = p.slice(1);
    const input = {
      notificationId: slack.notificationId,
      slackId: slack.slackId,
      name: 'stolen',
      ...Object.fromEntries(['telegram', 'discord', 'email', 'resend', 'gotify', 'ntfy', 'mattermost', 'custom', 'lark', 'teams', 'pushover'].map(k => [`${k}Id`, slack.slackId])),
    };
    const r = methods.get ? await other.client.get(op, { notificationId: slack.notificationId }) : await other.client.post(op, input);
    if (r.status !== 404) answered.push(`${op}: ${r.status}`);
  }
  t.same(answered, [], 'every one answers another organization 404 NOT_FOUND');
  t.same((await other.client.get('notification.all')).body, []);
  t.same((await other.client.get('notification.getEmailProviders')).body, []);
  t.equal((await c.get('notification.one', { notificationId: slack.notificationId })).body.name, 'slack ops', 'and changed nothing');

  const member = await addMember(server, c, 'member@example.com');
  t.equal((await member.client.get('notification.one', { notificationId: slack.notificationId })).status, 200, 'a member reads channels');
  for (const [op, input] of [
    ['notification.createSlack', { name: 'm', ...olderToggles, webhookUrl: `${sink.url}/m` }],
    ['notification.updateSlack', { notificationId: slack.notificationId, slackId: slack.slackId, name: 'm' }],
    ['notification.remove', { notificationId: slack.notificationId }],
    ['notification.testSlackConnection', { webhookUrl: `${sink.url}/m`, channel: '' }],
  ] as const) {
    t.equal((await member.client.post(op, input)).status, 403, `${op}: admins only`);
  }
  emitBuildError('other-org', other.organizationId);

  const count = await db.query('select count(*)::int as n from notification_deliveries');
  const anon = new Client(server.url);
  const r = await anon.post('notification.receiveNotification', {
    ServerType: 'Remote',
    Type: 'CPU',
    Value: 95,
    Threshold: 80,
    Message: 'CPU high',
    Timestamp: new Date().toISOString(),
    Token: 'not-a-token',
  });
  t.equal(r.status, 401, 'no server has this token (no server records exist yet: no token can match)');
  const r2 = await anon.post('notification.receiveNotification', { Type: 'Memory', Value: 95, Threshold: 80, Message: 'x', Timestamp: 'now', Token: '' });
  t.equal(r2.status, 401, 'the empty token neither');
  await new Promise(res => setTimeout(res, 300));
  t.equal((await db.query('select count(*)::int as n from notification_deliveries')).rows[0].n, count.rows[0].n, 'nothing stored');
  t.notOk(
    sink.requests.some(q => q.body.includes('other-org')),
    "another organization's event reaches none of these channels",
  );
});

t.test('remove deletes the channel and its log', async t => {
  const r = await c.post('notification.remove', { notificationId: slack.notificationId });
  t.equal(r.status, 200);
  t.equal(r.body.notificationId, slack.notificationId);
  t.equal((await c.get('notification.one', { notificationId: slack.notificationId })).status, 404);
  t.equal((await db.query('select count(*)::int as n from notification_deliveries where notification_id = $1', [slack.notificationId])).rows[0].n, 0);
  const providers = await c.get('notification.getEmailProviders');
  t.same(
    providers.body.map((n: any) => n.notificationType),
    ['email'],
  );
});

t.test('a start forgets deliveries that ended more than 30 days ago', async t => {
  const hook = (await c.get('notification.one', { notificationId: custom.notificationId })).body;
  const insert = (id: string, state: string, days: number) =>
    db.query(
      `insert into notification_deliveries (delivery_id, notification_id, organization_id, event, message, state, tries, next_attempt_at, created_at)
     values ($1, $2, $3, 'appDeploy', '{"title":"old"}', $4, 1, now(), now() - make_interval(days => $5))`,
      [id, hook.notificationId, admin.organizationId, state, days],
    );
  await insert('old-sent-000000000000000000000000'.slice(0, 32), 'sent', 31);
  await insert('old-dead-000000000000000000000000'.slice(0, 32), 'dead', 40);
  await insert('recent-sent-0000000000000000000000'.slice(0, 32), 'sent', 29);
  // A new kernel on the same data (the embedded database stops with the first, so a new connection too).
  dbOpen = false;
  await db.end();
  await server.stop();
  const again = await server.restart({ proxy: 'none', notifyTimeoutSeconds: 2, notifyMaxTries: 3 });
  const db2 = new pg.Client(again.database);
  await db2.connect();
  t.teardown(() => db2.end());
  await waitFor('the old ones pruned', async () => (await db2.query(`select 1 from notification_deliveries where delivery_id like 'old-%'`)).rowCount === 0);
  t.equal((await db2.query(`select 1 from notification_deliveries where delivery_id like 'recent-%'`)).rowCount, 1, 'a recent one is kept');
});
