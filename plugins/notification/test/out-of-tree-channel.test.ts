// A notification channel written outside Berth, as a third party writes one: two files
// (package.json + index.js) in a directory outside the repository, importing @berth/core from the
// running Berth, enabled by one config line. It passes the shared conformance suite, and the
// notification plugin serves its operations and delivers events through it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { channelConformance, httpChannelTarget, signUpAdmin, startHttpSink, startTestServer, waitFor } from '@berth/core/testing';

t.setTimeout(120_000);

const outside = mkdtempSync(path.join(os.tmpdir(), 'berth-third-party-notify-'));
t.teardown(() => rmSync(outside, { recursive: true, force: true }));
const dir = path.join(outside, 'berth-notify-rocketchat');
mkdirSync(dir);
writeFileSync(
  path.join(dir, 'package.json'),
  JSON.stringify({ name: 'berth-notify-rocketchat', version: '1.0.0', type: 'module', main: 'index.js', peerDependencies: { '@berth/core': '*' } }, null, 2),
);
writeFileSync(
  path.join(dir, 'index.js'),
  `
import { ChannelError, defineProvider, invalidField, Type } from '@berth/core';

class RocketChatChannel {
  id = 'rocketchat';
  label = 'Rocket.Chat';
  procedureSuffix = 'RocketChat';
  settings = Type.Object({ webhookUrl: Type.String({ minLength: 1, maxLength: 2048 }), alias: Type.Optional(Type.String({ maxLength: 255 })) });
  secretFields = ['webhookUrl'];
  validate(s) {
    if (!/^https?:\\/\\//.test(s.webhookUrl)) throw invalidField('webhookUrl', 'must be an http or https URL');
  }
  async send(s, m, { signal }) {
    let res;
    try {
      res = await fetch(s.webhookUrl, { method: 'POST', signal, headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ alias: s.alias, text: m.title + '\\n' + m.fields.map(f => f.name + ': ' + f.value).join('\\n') }) });
    } catch (e) {
      throw new ChannelError('Rocket.Chat did not answer: ' + (signal.aborted ? 'timeout' : e.message));
    }
    const body = (await res.text()).slice(0, 2000);
    if (!res.ok) throw new ChannelError('Rocket.Chat answered ' + res.status + ': ' + body, { status: res.status, body });
    return { status: res.status, body };
  }
}

export default defineProvider({ contract: 'notify', id: 'rocketchat', options: Type.Object({}, { additionalProperties: false }), create: () => new RocketChatChannel() });
`,
);

const sink = await startHttpSink(t);
// The one config line.
const server = await startTestServer({ proxy: 'none', providers: { notify: { rocketchat: { resolve: dir } } } as never });
t.teardown(() => server.destroy());

channelConformance(t, (await import(pathToFileURL(path.join(dir, 'index.js')).href)).default, () => httpChannelTarget(sink, { webhookUrl: `${sink.url}/hooks/rc-conformance/secret-token` }));

t.test("the plugin serves the channel's operations and delivers through it", async t => {
  const { client, organizationId } = await signUpAdmin(server);
  const doc = (await client.get('settings.getOpenApiDocument')).body;
  for (const op of ['createRocketChat', 'updateRocketChat', 'testRocketChatConnection']) t.ok(doc.paths[`/notification.${op}`], `notification.${op} is in the document`);
  const created = await client.post('notification.createRocketChat', {
    name: 'rc',
    appBuildError: true,
    databaseBackup: false,
    dokployRestart: false,
    appDeploy: false,
    dockerCleanup: false,
    webhookUrl: `${sink.url}/hooks/rc/secret-token-42`,
    alias: 'Berth',
  });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.equal(created.body.notificationType, 'rocketchat');
  t.same(created.body.rocketchat, { rocketchatId: created.body.rocketchatId, webhookUrl: `${sink.url}/********`, alias: 'Berth' }, 'its record, the secret masked');
  t.equal((await client.post('notification.testRocketChatConnection', { webhookUrl: `${sink.url}/hooks/rc/test` })).body, true);
  (server.kernel.container.cradle as any).events.emit('appBuildError', {
    applicationId: 'a',
    organizationId,
    appName: 'third-party-app',
    deploymentId: 'd',
    error: 'boom',
    at: new Date().toISOString(),
  });
  await waitFor('the event at the sink', () => sink.to('/hooks/rc/secret-token-42').some(r => r.body.includes('third-party-app')), { timeout: 5_000 });
  t.match(JSON.parse(sink.to('/hooks/rc/secret-token-42').at(-1)!.body), { alias: 'Berth', text: /Build failed: third-party-app\nError: boom/ });
});
