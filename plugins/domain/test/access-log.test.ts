// The peer's Requests switch: with the traefik provider, toggleRequests names the peer's access
// log in traefik.yml (and takes it away), and haveActivateRequests reads it back from the file;
// with another proxy, or none, there is no Traefik configuration to change: false, nothing written.
// Each on both wire forms; a member, and another organization's owner, refused (this machine's
// proxy is the instance operators').
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { addMember, freePort, otherOrganization, signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';

/** The answer of either wire form: the tRPC envelope's json, or the REST body. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

t.test('with the traefik provider', async t => {
  // No proxy service is started: only its files are read and written.
  const server = await startTestServer({ proxy: 'traefik', proxyHttpPort: await freePort(), proxyHttpsPort: await freePort() });
  t.teardown(() => server.destroy());
  const { client: a, userId } = await signUpAdmin(server);
  const member = await addMember(server, a, 'member@example.com', 'member');
  const other = await otherOrganization(server, userId);
  const main = () => parse(readFileSync(path.join(server.kernel.container.cradle.providers.get('proxy', 'traefik').configDir, 'traefik.yml'), 'utf8')) as Record<string, any>;

  t.equal(data(await a.get('settings.haveActivateRequests')), false, 'off at first (REST)');
  const on = await a.trpc('mutation', 'settings.toggleRequests', { enable: true });
  t.same([on.status, data(on)], [200, true], 'turned on (tRPC form)');
  t.same(main().accessLog, { filePath: '/etc/dokploy/traefik/dynamic/access.log', format: 'json', bufferingSize: 100 }, "traefik.yml names the peer's access log");
  t.ok(main().entryPoints?.web, 'and keeps the rest of the static configuration');
  t.equal(data(await a.trpc('query', 'settings.haveActivateRequests')), true, 'read back (tRPC)');
  const off = await a.post('settings.toggleRequests', { enable: false });
  t.same([off.status, off.body], [200, true], 'turned off (REST form)');
  t.equal(main().accessLog, undefined, 'traefik.yml names none');
  t.equal(data(await a.get('settings.haveActivateRequests')), false);

  t.equal((await a.post('settings.toggleRequests', { enable: 'yes' })).status, 400, 'enable is a boolean');
  t.equal((await member.client.post('settings.toggleRequests', { enable: true })).status, 403, 'a member may not');
  t.equal((await member.client.get('settings.haveActivateRequests')).status, 403, 'nor read it');
  t.equal((await other.client.post('settings.toggleRequests', { enable: true })).status, 403, "nor another organization's owner");
  t.equal(main().accessLog, undefined, 'the refused calls wrote nothing');
});

t.test('without Traefik there is no access log to turn on', async t => {
  const server = await startTestServer({ proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client: a } = await signUpAdmin(server);
  t.equal(data(await a.trpc('query', 'settings.haveActivateRequests')), false);
  t.equal(data(await a.trpc('mutation', 'settings.toggleRequests', { enable: true })), false, 'false: nothing could be changed, as the peer answers without its Traefik configuration');
  t.same((await a.post('settings.toggleRequests', { enable: false })).body, false);
});
