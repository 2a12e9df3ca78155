import t from 'tap';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { SecretBox, hashPassword, verifyPassword, hashToken, newId } from '../src/crypto.ts';

t.test('secrets at rest: sealed, authenticated, keyed by the data dir secret', async t => {
  const dir = t.testdir();
  const box = SecretBox.fromConfig(undefined, dir);
  const file = path.join(dir, 'secret.key');
  t.equal(statSync(file).mode & 0o777, 0o600, 'generated key file is private');
  const sealed = box.encrypt('JBSWY3DPEHPK3PXP');
  t.notMatch(sealed, /JBSWY3DPEHPK3PXP/);
  t.equal(box.decrypt(sealed), 'JBSWY3DPEHPK3PXP');
  t.equal(SecretBox.fromConfig(undefined, dir).decrypt(sealed), 'JBSWY3DPEHPK3PXP', 'the same key on the next start');
  t.throws(() => new SecretBox('another secret of enough length, yes').decrypt(sealed), { message: /unable to authenticate data/ }, 'another key cannot open it');
  const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  t.throws(() => box.decrypt(tampered), { message: /unable to authenticate data/ }, 'tampering is detected');
  t.ok(readFileSync(file, 'utf8').trim().length >= 32);
});

t.test('passwords and tokens are stored as hashes', async t => {
  const h = await hashPassword('correct horse');
  t.match(h, /^scrypt\$/);
  t.ok(await verifyPassword('correct horse', h));
  t.notOk(await verifyPassword('wrong horse', h));
  t.notOk(await verifyPassword('x', null));
  t.equal(hashToken('abc'), hashToken('abc'));
  t.equal(hashToken('abc').length, 64);
  t.equal(newId().length, 21);
  t.not(newId(), newId());
});
