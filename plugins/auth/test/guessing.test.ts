// Logins resist guessing (issue 13, finding 4): failures are counted per account and per client
// address; past a few, every attempt waits (429 TOO_MANY_REQUESTS with Retry-After), the right
// password included; a wait ends and a success clears the account's count. The server's clock is
// the test's (manualClock): it stands still between requests and moves only when the test moves it.
import t from 'tap';
import { startTestServer, signUpAdmin, Client, manualClock } from '@berth/core/testing';

const login = (url: string, email: string, password: string) =>
  fetch(`${url}/api/auth.login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });

t.test('wrong passwords: five are answered 401, then every attempt of that account waits', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  await signUpAdmin(server, 'owner@example.com', 'the right password');
  const clock = manualClock(server);
  for (let i = 1; i <= 6; i++) t.equal((await login(server.url, 'owner@example.com', `wrong guess ${i}`)).status, 401, `guess ${i}`);
  const blocked = await login(server.url, 'owner@example.com', 'the right password');
  t.equal(blocked.status, 429, 'the right password waits too');
  t.equal((await blocked.json()).code, 'TOO_MANY_REQUESTS');
  t.equal(blocked.headers.get('retry-after'), '1', 'the first wait is one second');
  t.equal((await new Client(server.url).trpc('mutation', 'auth.login', { email: 'OWNER@example.com', password: 'wrong guess' })).status, 429, 'on the tRPC form and in any case of the address');
  clock.advance(999);
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 429, 'a millisecond before the wait ends, still waiting');
  // Once the wait is over, the right password works and clears the count.
  clock.advance(1);
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 200, 'when the wait ends, the right password signs in');
  for (let i = 1; i <= 5; i++) t.equal((await login(server.url, 'owner@example.com', `wrong guess again ${i}`)).status, 401, `a success starts the count over: guess ${i}`);
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 200, 'five failures after it are still free');
});

t.test('one address guessing many accounts waits too', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  await signUpAdmin(server, 'owner@example.com', 'the right password');
  const clock = manualClock(server);
  const statuses: number[] = [];
  for (let i = 0; i < 52; i++) statuses.push((await login(server.url, `nobody${i}@example.com`, 'wrong guess')).status);
  t.same([...new Set(statuses.slice(0, 50))], [401], 'fifty failures over fifty accounts are answered 401');
  t.equal(statuses.at(-1), 429, 'then the address waits');
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 429, 'for every account');
  clock.advance(1000);
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 200, 'until the wait ends');
  t.equal((await login(server.url, 'nobody-else@example.com', 'wrong guess')).status, 401, 'a success does not reopen the address: its next failure counts');
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 429, 'and waits twice as long (2 s)');
  clock.advance(1999);
  t.equal((await login(server.url, 'owner@example.com', 'the right password')).status, 429, 'a millisecond before the end');
});
