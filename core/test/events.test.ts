// The event bus's bookkeeping of what runs after an emitter moved on: the kernel's stop waits for it
// (settled) before it closes the database, within a bound.
import t from 'tap';
import type { EntityManager } from '@mikro-orm/postgresql';
import { EventBus } from '../src/events.ts';

const noEm = () => ({}) as EntityManager;

t.test('settled waits for durable subscribers and listeners a plain emit started, and for what they emit in turn', async t => {
  const errors: string[] = [];
  const bus = new EventBus((_e, event) => void errors.push(event), noEm);
  const done: string[] = [];
  bus.onDurable('organizationRemoved', async () => {
    await new Promise(r => setTimeout(r, 80));
    done.push('durable');
    bus.emit('platformStart', { at: 'then' });
  });
  bus.on('organizationRemoved', async () => {
    await new Promise(r => setTimeout(r, 40));
    done.push('listener');
  });
  bus.on('platformStart', async () => {
    await new Promise(r => setTimeout(r, 40));
    done.push('second');
  });
  bus.emit('organizationRemoved', { organizationId: 'o', at: 'now' });
  t.same(done, [], 'nothing ran before the emitter moved on');
  t.equal(await bus.settled(5_000), true);
  t.same(done, ['listener', 'durable', 'second']);
  t.same(errors, []);
});

t.test('a failing subscriber is reported and does not hold settled', async t => {
  const errors: string[] = [];
  const bus = new EventBus((_e, event) => void errors.push(event), noEm);
  bus.on('platformStart', async () => {
    throw new Error('no');
  });
  bus.emit('platformStart', { at: 'now' });
  t.equal(await bus.settled(5_000), true);
  t.same(errors, ['platformStart']);
});

t.test('one that hangs is given up on after the bound', async t => {
  const bus = new EventBus(() => {}, noEm);
  bus.on('platformStart', () => new Promise(() => {}));
  bus.emit('platformStart', { at: 'now' });
  const at = Date.now();
  t.equal(await bus.settled(100), false);
  t.ok(Date.now() - at >= 90, 'it waited the bound');
  t.equal(await new EventBus(() => {}, noEm).settled(100), true, 'nothing running: settled at once');
});
