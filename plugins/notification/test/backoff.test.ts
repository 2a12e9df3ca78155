// The outbox's backoff: 10 s after the first failed try, doubling.
import t from 'tap';
import { backoffMs } from '../src/config.ts';

t.test('backoff: 10 s after the first failure, doubling', async t => {
  t.same([1, 2, 3, 4, 5].map(backoffMs), [10_000, 20_000, 40_000, 80_000, 160_000]);
});
