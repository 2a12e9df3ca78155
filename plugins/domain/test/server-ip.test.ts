// settings.getIp and settings.updateServerIp through the real kernel: this server's address is
// serverIp, else the default route's interface; updateServerIp (the instance operators) sets it for every reader
// (generated domains, the web-server settings), keeps it across a restart over the configured one,
// and '' returns to the configured one. Who may call each, and bad addresses named.
import t from 'tap';
import { addMember, Client, otherOrganization, signUpAdmin, startTestServer } from '@berth/core/testing';
import { localRouteAddress } from '@berth/plugin-hosts';

t.test('this server’s address', async t => {
  const first = await startTestServer({ proxy: 'none' });
  t.teardown(() => first.destroy());
  const admin = await signUpAdmin(first);
  let c = admin.client;
  const routed = await localRouteAddress();

  t.equal((await c.get('settings.getIp')).body, routed, "without serverIp: the default route's interface address");
  t.equal((await c.get('settings.getWebServerSettings')).body.serverIp, null);

  const member = await addMember(first, c, 'member@example.com', 'member');
  const other = await addMember(first, c, 'second-admin@example.com', 'admin');
  t.equal((await member.client.get('settings.getIp')).body, routed, 'a member reads it, as the peer lets every signed-in user');
  t.equal((await member.client.post('settings.updateServerIp', { serverIp: '203.0.113.7' })).status, 403, 'a member may not set it');
  const stranger = await otherOrganization(first, other.userId);
  t.equal(
    (await stranger.client.post('settings.updateServerIp', { serverIp: '203.0.113.7' })).status,
    403,
    'nor the owner of another organization: it is the whole instance’s (its operators, as the proxy settings)',
  );

  for (const bad of ['not-an-ip', '203.0.113', 'example.com', '1.2.3.4 ']) {
    const r = await c.post('settings.updateServerIp', { serverIp: bad.trim() === bad ? bad : `x${bad}` });
    t.equal(r.status, 400, `"${bad}" is refused`);
    t.match(r.body.issues, [{ path: ['serverIp'], message: /^serverIp: .* is not an IPv4 or IPv6 address/ }]);
  }
  t.equal((await c.post('settings.updateServerIp', {})).status, 400, 'serverIp is required');
  t.equal((await c.get('settings.getIp')).body, routed, 'nothing was set by a refused call');

  const set = await c.post('settings.updateServerIp', { serverIp: '203.0.113.7' });
  t.equal(set.status, 200);
  t.match(set.body, { serverIp: '203.0.113.7', proxy: 'none' }, 'answers the web-server settings, as assignDomainServer does');
  t.equal((await c.get('settings.getIp')).body, '203.0.113.7');
  t.match((await c.post('domain.generateDomain', { appName: 'shop' })).body, /^shop-[0-9a-f]{6}-203-0-113-7\.sslip\.io$/, 'generated domains point at it');
  t.equal((await c.get('domain.canGenerateTraefikMeDomains', {})).body, '203.0.113.7');
  t.equal((await c.post('settings.updateServerIp', { serverIp: '2001:db8::1' })).body.serverIp, '2001:db8::1', 'an IPv6 address too');
  await c.post('settings.updateServerIp', { serverIp: '203.0.113.7' });

  // A restart with another configured address: the stored one stays until '' takes it away.
  const second = await first.restart({ serverIp: '198.51.100.1' });
  c = new Client(second.url, { apiKey: admin.apiKey });
  t.equal((await c.get('settings.getIp')).body, '203.0.113.7', 'the stored address outlives a restart and wins over the configured one');
  t.equal((await c.post('settings.updateServerIp', { serverIp: '' })).body.serverIp, '198.51.100.1', "'' returns to the configured address");
  t.equal((await c.get('settings.getIp')).body, '198.51.100.1');
  const third = await second.restart({ serverIp: undefined });
  c = new Client(third.url, { apiKey: admin.apiKey });
  t.equal((await c.get('settings.getIp')).body, routed, 'and with none configured, the route’s address again');
});
