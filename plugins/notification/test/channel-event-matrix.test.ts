// Every event through every channel: one record per built-in channel with every toggle on (the
// HTTP ones at the loopback sink, email at a real SMTP server), each notified event emitted once,
// and what arrived checked per channel and event; a channel with every toggle off and one with a
// single toggle on receive nothing else. Then a real deploy: its appDeploy message names the
// workload, environment and project with a link to the log, and a channel whose provider hangs
// does not make the deploy slower.
import t from 'tap';
import { deploymentFinished, deploymentIdOf, removeServiceAndVolume, signUpAdmin, startHttpSink, startSmtp, startTestServer, makeCertificate, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';

t.setTimeout(300_000);

const sink = await startHttpSink(t);
// Telegram wants ok:true, Pushover status:1, Lark code:0; one answer satisfies all.
sink.setDefault({ status: 200, body: '{"ok":true,"status":1,"code":0}' });
const smtp = await startSmtp(t, makeCertificate(t), 'none');
const server = await startTestServer({
  proxy: 'none',
  deploySettleSeconds: 0,
  // A send that blocked the deploy would add this much to it.
  notifyTimeoutSeconds: 15,
  providers: { notify: Object.fromEntries(['telegram', 'pushover', 'resend'].map(id => [id, { options: { apiUrl: `${sink.url}/${id}` } }])) } as never,
});
t.teardown(() => server.destroy());
const { client: c, organizationId } = await signUpAdmin(server);
const cradle = server.kernel.container.cradle as any;

const allOn = {
  appDeploy: true,
  appBuildError: true,
  databaseBackup: true,
  volumeBackup: true,
  dokployBackup: true,
  dokployRestart: true,
  dockerCleanup: true,
  serverThreshold: true,
  appHealth: true,
};
const allOff = Object.fromEntries(Object.keys(allOn).map(k => [k, false]));
/** Each channel's settings, all pointing at the sink under /<id>/ (email: the SMTP server). */
const channels: Record<string, { suffix: string; settings: Record<string, unknown> }> = {
  slack: { suffix: 'Slack', settings: { webhookUrl: `${sink.url}/slack/T0/B0/k`, channel: '#ops' } },
  discord: { suffix: 'Discord', settings: { webhookUrl: `${sink.url}/discord/api/webhooks/1/k`, decoration: true } },
  telegram: { suffix: 'Telegram', settings: { botToken: '123:k', chatId: '-100' } },
  email: {
    suffix: 'Email',
    settings: { smtpServer: '127.0.0.1', smtpPort: smtp.port, username: 'berth', password: 'mail-secret', fromAddress: 'berth@example.com', toAddresses: ['ops@example.com'], tlsMode: 'none' },
  },
  resend: { suffix: 'Resend', settings: { apiKey: 're_k', fromAddress: 'berth@example.com', toAddresses: ['ops@example.com'] } },
  gotify: { suffix: 'Gotify', settings: { serverUrl: `${sink.url}/gotify`, appToken: 'k', priority: 5, decoration: false } },
  ntfy: { suffix: 'Ntfy', settings: { serverUrl: `${sink.url}/ntfy`, topic: 'berth', priority: 3 } },
  mattermost: { suffix: 'Mattermost', settings: { webhookUrl: `${sink.url}/mattermost/hooks/k` } },
  custom: { suffix: 'Custom', settings: { endpoint: `${sink.url}/custom/in` } },
  lark: { suffix: 'Lark', settings: { webhookUrl: `${sink.url}/lark/hook/k` } },
  teams: { suffix: 'Teams', settings: { webhookUrl: `${sink.url}/teams/invoke?sig=k` } },
  pushover: { suffix: 'Pushover', settings: { userKey: 'user-k', apiToken: 'app-k', priority: 0 } },
};

const at = () => new Date().toISOString();
/** Each notified event with a payload carrying a marker that its message shows. */
const events: Record<string, { payload: Record<string, unknown>; shows: string }> = {
  appDeploy: { payload: { applicationId: 'a', organizationId, appName: 'mk-deployed', deploymentId: 'd', image: 'img:1', action: 'deploy', at: at() }, shows: 'mk-deployed' },
  appBuildError: { payload: { applicationId: 'a', organizationId, appName: 'mk-buildfail', deploymentId: 'd', error: 'exit 1', at: at() }, shows: 'mk-buildfail' },
  databaseBackup: { payload: { backupId: 'mk-dbbackup', organizationId, databaseType: 'postgres', status: 'error', file: null, error: 'disk full' }, shows: 'mk-dbbackup' },
  volumeBackup: { payload: { volumeBackupId: 'v', organizationId, volumeName: 'mk-volume', status: 'success', file: 'x.tar', error: null }, shows: 'mk-volume' },
  ownDataBackup: { payload: { backupId: 'b', organizationId, status: 'success', file: 'mk-owndata.tar.gz.enc', error: null, at: at() }, shows: 'mk-owndata' },
  platformStart: { payload: { at: at() }, shows: 'Berth started' },
  dockerCleanup: {
    payload: { organizationId: null, serverId: null, serverName: 'mk-cleanup-host', removed: { containers: 2, images: 3, volumes: 0, reclaimedBytes: 5 << 20 }, at: at() },
    shows: 'mk-cleanup-host',
  },
  serverThreshold: { payload: { organizationId, serverId: 's', serverName: 'mk-threshold', type: 'CPU', value: 97, threshold: 90, message: 'hot', at: at() }, shows: 'mk-threshold' },
  serverUnreachable: { payload: { organizationId, serverId: 's', serverName: 'mk-unreachable', reason: 'ssh timeout', at: at() }, shows: 'mk-unreachable' },
  serverReachable: { payload: { organizationId, serverId: 's', serverName: 'mk-reachable', at: at() }, shows: 'mk-reachable' },
  scheduleFailed: { payload: { organizationId, scheduleId: 'sc', name: 'mk-schedule', error: 'exit 2', at: at() }, shows: 'mk-schedule' },
  certificateExpiring: { payload: { certificateId: 'c', organizationId, name: 'mk-certificate', expiresAt: at(), daysLeft: 3 }, shows: 'mk-certificate' },
  certificateRenewalFailed: { payload: { domainId: 'dm', organizationId, host: 'mk-renewal.example.com', reason: 'rate limited' }, shows: 'mk-renewal' },
  appHealth: { payload: { organizationId, kind: 'application', id: 'a', appName: 'mk-health', state: 'unhealthy', message: 'restarting', at: at() }, shows: 'mk-health' },
};

/** What a channel received: the sink's bodies under its path, or the mails (soft line breaks undone). */
const received = (id: string): string[] => (id === 'email' ? smtp.mails.map(m => m.replace(/=\r?\n/g, '')) : sink.to(`/${id}/`).map(r => r.body));

t.test('every event reaches every channel; toggles off send nothing', async t => {
  for (const [id, ch] of Object.entries(channels)) {
    const r = await c.post(`notification.create${ch.suffix}`, { name: id, ...allOn, ...ch.settings });
    t.equal(r.status, 200, `${id}: ${JSON.stringify(r.body).slice(0, 300)}`);
  }
  t.equal((await c.post('notification.createSlack', { name: 'silent', ...allOff, webhookUrl: `${sink.url}/silent/T0/B0/k`, channel: '' })).status, 200);
  t.equal((await c.post('notification.createCustom', { name: 'deploys only', ...allOff, appDeploy: true, endpoint: `${sink.url}/deploys-only/in` })).status, 200);

  const started = Date.now();
  for (const [event, e] of Object.entries(events)) cradle.events.emit(event, e.payload);
  const missing = () =>
    Object.keys(channels).flatMap(id =>
      Object.entries(events)
        .filter(([, e]) => !received(id).some(body => body.includes(e.shows)))
        .map(([event]) => `${id}×${event}`),
    );
  await waitFor('every event at every channel', () => missing().length === 0, { timeout: 30_000 }).catch(() => {});
  t.same(missing(), [], `${Object.keys(channels).length} channels × ${Object.keys(events).length} events arrived (${Date.now() - started} ms)`);
  for (const id of Object.keys(channels)) {
    if (id === 'email') continue;
    t.equal(received(id).length, Object.keys(events).length, `${id}: one request per event, no duplicate`);
  }
  t.equal(smtp.mails.length, Object.keys(events).length, 'email: one mail per event');
  t.same(sink.to('/silent/'), [], 'a channel with every toggle off received nothing');
  const only = sink.to('/deploys-only/');
  t.equal(only.length, 1, 'a channel with only appDeploy on received one message');
  t.match(only[0]?.body ?? '', 'mk-deployed');
});

t.test('a real deploy: the message says where, and a hanging provider does not slow the deploy', async t => {
  const project = await c.post('project.create', { name: 'matrix-shop' });
  const app = (await c.post('application.create', { name: 'web', environmentId: project.body.environment.environmentId })).body;
  t.teardown(() => removeServiceAndVolume(app.appName));
  await c.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
  await c.post('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'] });

  const deploy = async () => {
    const done = await deploymentFinished(c, deploymentIdOf(await c.post('application.deploy', { applicationId: app.applicationId })));
    t.equal(done.status, 'done', `deployed: ${done.errorMessage ?? ''}`);
    return { finishedAt: Date.parse(String(done.finishedAt)), deploymentId: done.deploymentId as string };
  };
  await deploy(); // creates the service; the next two replace its task
  const quiet = await deploy();
  await waitFor('the deploy at the custom webhook', () => sink.to('/custom/').some(r => r.body.includes(quiet.deploymentId)));
  const hook = JSON.parse(sink.to('/custom/').find(r => r.body.includes(quiet.deploymentId))!.body);
  t.equal(hook.type, 'appDeploy');
  t.same(
    hook.data.fields.slice(0, 3).map((f: { name: string; value: string }) => `${f.name}=${f.value}`),
    ['Project=matrix-shop', 'Environment=production', `Application=web (${app.appName})`],
    'the project, environment and workload',
  );
  t.match(hook.data.link, new RegExp(`/api/deployment\\.readLogs\\?deploymentId=${quiet.deploymentId}$`), "a link to the deployment's log");

  const hanging = await startHttpSink(t);
  hanging.setDefault('hang');
  t.equal((await c.post('notification.createCustom', { name: 'hangs', ...allOff, appDeploy: true, appBuildError: true, endpoint: `${hanging.url}/in` })).status, 200);
  const slowed = await deploy();
  await waitFor('the hanging provider was called', () => hanging.requests.some(r => r.body.includes(slowed.deploymentId)));
  // Observed, not timed: a deploy that waited for the provider would finish only once its 15 s
  // timeout ran out after the call; this one is done by then, however long the deploy itself took.
  const called = hanging.requests.find(r => r.body.includes(slowed.deploymentId))!.at;
  t.ok(slowed.finishedAt < called + 10_000, `the deploy was done ${slowed.finishedAt - called} ms after the hanging provider was called (it times out after 15 s): it did not wait for it`);
});

t.test("a compose stack's deploy and failure are heard too (composeId)", async t => {
  const project = await c.post('project.create', { name: 'matrix-stacks' });
  const environmentId = project.body.environment.environmentId;
  const file = (extra = '') => `services:\n  app:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sleep", "3600"]\n${extra}`;
  const ok = (await c.post('compose.create', { name: 'stack-ok', environmentId, composeFile: file() })).body;
  t.teardown(() => c.post('compose.delete', { composeId: ok.composeId, deleteVolumes: true }));
  const bad = (await c.post('compose.create', { name: 'stack-bad', environmentId, composeFile: file('    volumes:\n      - /etc:/host-etc:ro\n') })).body;
  t.teardown(() => c.post('compose.delete', { composeId: bad.composeId, deleteVolumes: true }));

  const done = await deploymentFinished(c, deploymentIdOf(await c.post('compose.deploy', { composeId: ok.composeId })));
  t.equal(done.status, 'done', done.errorMessage ?? '');
  const failed = await deploymentFinished(c, deploymentIdOf(await c.post('compose.deploy', { composeId: bad.composeId })));
  t.equal(failed.status, 'error');

  const at = (deploymentId: string) =>
    waitFor(`the webhook for ${deploymentId}`, () => {
      const r = sink.to('/custom/').find(q => q.body.includes(deploymentId));
      return r ? JSON.parse(r.body) : undefined;
    });
  const deployed = await at(done.deploymentId);
  t.equal(deployed.type, 'appDeploy');
  t.equal(deployed.data.composeId, ok.composeId);
  t.same(
    deployed.data.fields.slice(0, 3).map((f: { name: string; value: string }) => `${f.name}=${f.value}`),
    ['Project=matrix-stacks', 'Environment=production', `Compose=stack-ok (${ok.appName})`],
  );
  const broken = await at(failed.deploymentId);
  t.equal(broken.type, 'appBuildError');
  t.equal(broken.data.title, `Build failed: ${bad.appName}`);
  t.match(broken.data.fields.find((f: { name: string }) => f.name === 'Error').value, /host access policy/, "the deployment's error");
});
