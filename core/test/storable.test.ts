// What PostgreSQL cannot store as text (a NUL, half of a surrogate pair): the raw routes refuse it
// (isStorable) or read it as U+FFFD (storable), and leave every other string as it is.
import t from 'tap';
import { isStorable, storable } from '../src/validation.ts';

t.test('a NUL and an unpaired surrogate are unstorable and read as U+FFFD; a whole pair is kept', async t => {
  for (const [text, read] of [
    ['ma\u0000in', 'ma\ufffdin'],
    ['\u0000\u0000', '\ufffd\ufffd'],
    ['a\ud800b', 'a\ufffdb'],
    ['\udc00', '\ufffd'],
    ['\udc00\ud800', '\ufffd\ufffd'],
  ]) {
    t.notOk(isStorable(text!), `${JSON.stringify(text)} is not storable`);
    t.equal(storable(text!), read, `${JSON.stringify(text)} reads as ${JSON.stringify(read)}`);
    t.ok(isStorable(storable(text!)), 'and what it reads as is');
  }
  for (const text of ['main', 'feature/ünïcode', 'emoji \ud83d\ude80 pair', '']) {
    t.ok(isStorable(text), `${JSON.stringify(text)} is storable`);
    t.equal(storable(text), text, 'and read unchanged');
  }
});
