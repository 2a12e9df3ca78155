// Logins resist guessing (issue 13, finding 4): failures are counted per account and per client
// address; past a few, every attempt waits (429 TOO_MANY_REQUESTS with Retry-After), the right
// password included; a wait ends and a success clears the account's count.
import t from 'tap';
import { startTestServer, signUpAdmin, Client, waitFor } from '@berth/core/testing';

const login = (url: string, email: string, password: string) =>
  fetch(`${url}/api/auth.login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });

t.test('wrong passwords: five are answered 401, then every attempt of that account waits', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  await signUpAdmin(server, 'owner@example.com', 'the right password');
  for (let i = 1; i <= 6; i++) t.equal((await login(server.url, 'owner@example.com', `wrong guess ${i}`)).status, 401, `guess ${i}`);
  const blocked = await login(server.url, 'owner@example.com', 'the right password');
  t.equal(blocked.status, 429, 'the right password waits too');
  t.equal((await blocked.json()).code, 'TOO_MANY_REQUESTS');
  const retry = Number(blocked.headers.get('retry-after'));
  t.ok(retry >= 1 && retry <= 900, `Retry-After ${retry} s`);
  t.equal((await new Client(server.url).trpc('mutation', 'auth.login', { email: 'OWNER@example.com', password: 'wrong guess' })).status, 429, 'on the tRPC form and in any case of the address');
  // Once the wait is over, the right password works and clears the count.
  await waitFor('the wait to end', async () => (await login(server.url, 'owner@example.com', 'the right password')).status === 200, { timeout: 20_000, interval: 500 });
  t.equal((await login(server.url, 'owner@example.com', 'wrong guess again')).status, 401, 'a success starts the count over');
});

t.test('one address guessing many accounts waits too', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  await signUpAdmin(server, 'owner@example.com', 'the right password');
  const statuses: number[] = [];
  for (let i = 0; i < 52; i++) statuses.push((await login(server.url, `nobody${i}@example.com`, 'wrong guess')).status);
  t.same([...new Set(statuses.slice(0, 50))], [401], 'fifty failures over fifty accounts are answered 401');
  t.equal(statuses.at(-1), 429, 'then the address waits');
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 429, 'for every account');
});
