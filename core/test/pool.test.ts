// inPool: the bound the document-wide suites and swarm.getContainerStats (one engine call per
// container) rely on — never more than `limit` tasks in flight, each run once, results in order.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { inPool } from '../src/pool.ts';

t.test('runs every task once, at most limit at a time, and answers the results in the tasks’ order', async t => {
  let running = 0;
  let most = 0;
  const started: number[] = [];
  // Later tasks finish sooner, so an answer in finishing order would be reversed.
  const tasks = Array.from({ length: 10 }, (_, i) => async () => {
    started.push(i);
    most = Math.max(most, ++running);
    await sleep(20 - i * 2);
    running--;
    return i * 10;
  });
  t.same(await inPool(3, tasks), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  t.equal(most, 3, 'three in flight at the most, and three reached');
  t.same(started, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'started in their order, each once');
});

t.test('no tasks: an empty answer; a limit above the count runs them all at once', async t => {
  t.same(await inPool(4, []), []);
  let running = 0;
  let most = 0;
  await inPool(
    8,
    Array.from({ length: 2 }, () => async () => {
      most = Math.max(most, ++running);
      await sleep(5);
      running--;
    }),
  );
  t.equal(most, 2);
});

t.test("a task's failure fails the pool", async t => {
  await t.rejects(inPool(2, [async () => 1, async () => Promise.reject(new Error('engine gone'))]), /engine gone/);
});
