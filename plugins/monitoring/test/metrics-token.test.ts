// user.getMetricsToken over HTTP on real PostgreSQL, on both wire forms: this machine's address and
// metricsConfig as the peer's clients read them before server.getServerMetrics — the peer's defaults
// until admin.setupMonitoring stores one, its token for the instance's operators only.
import t from 'tap';
import { addMember, otherOrganization, signUpAdmin, startTestServer, Client } from '@berth/core/testing';

const TOKEN = 'metrics-token-of-this-machine';

t.test('user.getMetricsToken', async t => {
  const server = await startTestServer({ proxy: 'none', jobs: false, serverIp: '203.0.113.7' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const member = await addMember(server, admin.client, 'member@example.com');
  const deputy = await addMember(server, admin.client, 'deputy@example.com', 'admin');
  // The same owner acting in an organization of its own that is not the instance's.
  const other = await otherOrganization(server, admin.userId);

  const before = await admin.client.get('user.getMetricsToken');
  t.equal(before.status, 200);
  t.same(
    before.body,
    {
      serverIp: '203.0.113.7',
      enabledFeatures: false,
      metricsConfig: {
        server: { type: 'Dokploy', refreshRate: 60, port: 4500, token: '', urlCallback: '', retentionDays: 2, cronJob: '', thresholds: { cpu: 0, memory: 0 } },
        containers: { refreshRate: 60, services: { include: [], exclude: [] } },
      },
    },
    "the peer's defaults before this machine is set up",
  );

  const metricsConfig = {
    server: { refreshRate: 30, port: 4599, token: TOKEN, urlCallback: 'http://127.0.0.1:9/alerts', retentionDays: 3, cronJob: '0 0 * * *', thresholds: { cpu: 90, memory: 80 } },
    containers: { refreshRate: 20, services: { include: ['app-web'] } },
  };
  t.equal((await admin.client.post('admin.setupMonitoring', { metricsConfig })).status, 200);

  const mine = await admin.client.get('user.getMetricsToken');
  t.same(
    mine.body,
    {
      serverIp: '203.0.113.7',
      enabledFeatures: false,
      // Berth's own members (thresholdSamples, thresholdCooldownMinutes) as stored, with their defaults.
      metricsConfig: {
        server: { ...metricsConfig.server, type: 'Dokploy', thresholdSamples: 3, thresholdCooldownMinutes: 30 },
        containers: { refreshRate: 20, services: { include: ['app-web'], exclude: [] } },
      },
    },
    'the stored settings with the token, for the instance owner',
  );
  t.same((await admin.client.trpc('query', 'user.getMetricsToken')).body, { result: { data: { json: mine.body } } }, 'the same on tRPC');
  t.same((await deputy.client.get('user.getMetricsToken')).body, mine.body, "an admin of the instance's organization operates it too");

  for (const [who, client] of [
    ["a member of the instance's organization", member.client],
    ['the owner acting in another organization', other.client],
  ] as const) {
    const r = await client.get('user.getMetricsToken');
    t.equal(r.status, 200, who);
    t.same(r.body, { ...mine.body, metricsConfig: { ...mine.body.metricsConfig, server: { ...mine.body.metricsConfig.server, token: '' } } }, `${who}: the same without the token`);
    t.notOk(JSON.stringify(r.body).includes(TOKEN), `${who}: the token is nowhere`);
  }
  t.equal((await new Client(server.url).get('user.getMetricsToken')).status, 401);
});
