// The login guard on a clock of the test's: how many failures are free, how the waits grow and
// end, and what a success clears. (plugins/auth/test/guessing.test.ts checks it through the API.)
import t from 'tap';
import { LoginGuard, LOGIN_LIMITS } from '../src/identity/login-guard.ts';

const clock = () => {
  let at = Date.UTC(2026, 0, 1);
  return { now: () => at, advance: (ms: number) => void (at += ms) };
};
const waits = (guard: LoginGuard, key: string): number | undefined => {
  try {
    guard.check([key]);
    return undefined;
  } catch (e) {
    const err = e as { code: string; message: string };
    t.equal(err.code, 'TOO_MANY_REQUESTS');
    return Number(err.message.match(/try again in (\d+) s/)?.[1]);
  }
};

t.test('five failures are free; then each failure doubles the wait, up to 15 minutes', async t => {
  const c = clock();
  const guard = new LoginGuard(c);
  const limits = LOGIN_LIMITS.account;
  for (let i = 1; i <= 5; i++) guard.fail([['a', limits]]);
  t.equal(waits(guard, 'a'), undefined, 'five failures: no wait');
  const seen: number[] = [];
  for (let i = 6; i <= 20; i++) {
    guard.fail([['a', limits]]);
    const wait = waits(guard, 'a')!;
    seen.push(wait);
    c.advance(wait * 1000 - 1);
    t.equal(waits(guard, 'a'), 1, `failure ${i}: still waiting a millisecond before the end`);
    c.advance(1);
    t.equal(waits(guard, 'a'), undefined, `failure ${i}: the wait of ${wait} s is over`);
  }
  t.same(seen, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900, 900]);
});

t.test('a success clears a key; other keys keep their count; an hour forgets', async t => {
  const c = clock();
  const guard = new LoginGuard(c);
  for (let i = 0; i < 6; i++)
    guard.fail([
      ['account', LOGIN_LIMITS.account],
      ['address', LOGIN_LIMITS.account],
    ]);
  t.equal(waits(guard, 'account'), 1);
  guard.clear('account');
  t.equal(waits(guard, 'account'), undefined, 'the cleared key no longer waits');
  t.equal(waits(guard, 'address'), 1, 'the other key still does');
  c.advance(60 * 60 * 1000);
  guard.fail([['address', LOGIN_LIMITS.account]]);
  t.equal(waits(guard, 'address'), undefined, 'an hour later the count starts over: one failure is free');
});
