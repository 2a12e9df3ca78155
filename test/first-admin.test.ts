// The first admin (issue 13, finding 7): a fresh instance writes a one-time setup token to a
// file of its data directory (0600); auth.createAdmin needs it unless the caller is on this
// machine's loopback and no proxy relayed the request. The README's curl session needs nothing.
import t from 'tap';
import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Client } from '@berth/core/testing';

const admin = { email: 'first@example.com', password: 'first admin password' };
/** An address of this machine that is not loopback, to reach the server as another machine would. */
const outsideAddress = () =>
  Object.values(os.networkInterfaces())
    .flat()
    .find(i => i && i.family === 'IPv4' && !i.internal)?.address;

t.test('from another machine, or through a proxy, the first admin needs the setup token', async t => {
  const server = await startTestServer({ host: '0.0.0.0', jobs: false });
  t.teardown(() => server.destroy());
  const file = path.join(server.dataDir, 'setup-token');
  t.ok(existsSync(file), 'a fresh instance writes the token file');
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by its owner only');
  const token = readFileSync(file, 'utf8').trim();
  t.ok(token.length >= 32, 'a long random token');

  const port = new URL(server.url).port;
  const address = outsideAddress();
  t.ok(address, `this machine has a non-loopback address (${address})`);
  const remote = new Client(`http://${address}:${port}`);
  const fromOutside = await remote.post('auth.createAdmin', admin);
  t.equal(fromOutside.status, 401, 'another machine without the token is refused');
  t.match(fromOutside.body.message, /setupToken/, 'saying what is needed');
  t.equal((await remote.post('auth.createAdmin', { ...admin, setupToken: 'x'.repeat(token.length) })).status, 401, 'a wrong token is refused');

  const local = new Client(`http://127.0.0.1:${port}`);
  for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
    const proxied = await local.post('auth.createAdmin', admin, { headers: { [header]: header === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9' } });
    t.equal(proxied.status, 401, `loopback relayed by a proxy (${header}) is not a local caller`);
  }
  const created = await remote.post('auth.createAdmin', { ...admin, setupToken: token });
  t.equal(created.status, 200, 'the token opens it');
  t.ok(created.body.token, 'signed in');
  t.notOk(existsSync(file), 'the token is spent');
  t.equal((await remote.post('auth.createAdmin', { ...admin, email: 'second@example.com', setupToken: token })).status, 401, 'and cannot be used again');
});

t.test("on this machine's loopback without a proxy, nothing is needed (the README's curl session)", async t => {
  const server = await startTestServer({ jobs: false });
  let current = server; // restarted below: the last kernel is the one to stop
  t.teardown(() => current.destroy());
  const created = await new Client(server.url).post('auth.createAdmin', admin);
  t.equal(created.status, 200);
  t.notOk(existsSync(path.join(server.dataDir, 'setup-token')), 'the token file is removed once an admin exists');
  const restarted = (current = await server.restart());
  t.notOk(existsSync(path.join(restarted.dataDir, 'setup-token')), 'and not written again');
});
