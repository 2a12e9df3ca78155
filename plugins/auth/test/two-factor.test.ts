// Two-factor login with real TOTP codes. The codes are computed from RFC 6238 (./totp.ts) with
// node:crypto alone, so the check does not share a library with the server.
import t from 'tap';
import { startTestServer, signUpAdmin, Client, manualClock, type ManualClock } from '@berth/core/testing';
import { base32Decode, totp as totpAt } from './totp.ts';

const start = () => startTestServer({ plugins: ['auth', 'user', 'organization'], jobs: false });
const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery';

/**
 * The server's time, which the test moves (manualClock): the codes are computed at it, and the
 * server checks them at it too.
 */
let clock: ManualClock | undefined;
const now = () => clock?.now() ?? Date.now();
/** A code at the server's time, unless the test names another. */
const totp = (base32Secret: string, atMs = now(), digits = 6) => totpAt(base32Secret, atMs, digits);

/**
 * Codes for logins: the server takes each time step's code once per account and never an older
 * one, so successive logins of an account use successive steps (moving the clock to the next step
 * when both acceptable steps, now and now + 1, are used up). `nextPin` only looks; `loginPin` uses it.
 */
const lastLoginStep = new Map<string, number>();
function nextPin(secret: string): { pin: string; step: number } {
  for (;;) {
    const current = Math.floor(now() / 30_000);
    const step = Math.max(current, (lastLoginStep.get(secret) ?? -1) + 1);
    if (step <= current + 1) return { pin: totp(secret, step * 30_000 + 15_000), step };
    // Both acceptable steps are used: the next one comes with the clock.
    clock!.advance(30_000);
  }
}
function loginPin(secret: string): string {
  const { pin, step } = nextPin(secret);
  lastLoginStep.set(secret, step);
  return pin;
}

/** A six-digit code that is wrong for every step the server may accept (the current one ± 1). */
function wrongPin(secret: string): string {
  const valid = new Set([-30_000, 0, 30_000].map(d => totp(secret, now() + d)));
  let n = Number(totp(secret));
  let pin: string;
  do {
    n = (n + 1) % 1_000_000;
    pin = String(n).padStart(6, '0');
  } while (valid.has(pin));
  return pin;
}

t.test('the TOTP of this test follows RFC 6238 (its SHA-1 test vectors)', async t => {
  const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // base32 of "12345678901234567890"
  t.equal(base32Decode(secret).toString(), '12345678901234567890');
  t.equal(totp(secret, 59_000, 8), '94287082');
  t.equal(totp(secret, 1111111109_000, 8), '07081804');
  t.equal(totp(secret, 1234567890_000, 8), '89005924');
  t.equal(totp(secret, 20000000000_000, 8), '65353130');
  t.equal(totp(secret, 59_000), '287082', 'six digits are the low digits');
});

t.test('two-factor login', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  // The server's time stands still until the test moves it: the login guard's and the codes'.
  const serverClock = manualClock(server);
  clock = serverClock;
  t.teardown(() => void (clock = undefined));
  const admin = await signUpAdmin(server, EMAIL, PASSWORD);
  const anon = new Client(server.url);

  // Every subtest has an account of its own, in the state it starts from.
  /** A new admin of the organization, signed in with a bearer token (`me`). */
  const account = async (email: string) => {
    const password = `${email.split('@')[0]}-password`;
    const created = await admin.client.post('user.createUserWithCredentials', { email, password, role: 'admin' });
    if (created.status !== 200) throw new Error(`createUserWithCredentials: ${created.status} ${JSON.stringify(created.body)}`);
    const login = () => anon.post('auth.login', { email, password });
    const signedIn = await login();
    if (signedIn.status !== 200) throw new Error(`login: ${signedIn.status} ${JSON.stringify(signedIn.body)}`);
    return { email, userId: created.body.userId as string, me: new Client(server.url, { token: signedIn.body.token }), login };
  };
  /** The same, with two-factor login turned on. */
  const withTwoFactor = async (email: string) => {
    const a = await account(email);
    const secret = (await a.me.get('auth.generate2FASecret')).body.secret as string;
    const on = await a.me.post('auth.verify2FASetup', { secret, pin: totp(secret) });
    if (on.status !== 200) throw new Error(`verify2FASetup: ${on.status} ${JSON.stringify(on.body)}`);
    return { ...a, secret };
  };

  t.test('generate2FASecret answers a base32 secret and its otpauth URI, and turns nothing on', async t => {
    const { email, me, login } = await account('generating@example.com');
    const r = await me.get('auth.generate2FASecret');
    t.equal(r.status, 200);
    t.match(r.body, { secret: /^[A-Z2-7]+=*$/, uri: /^otpauth:\/\/totp\//, qrCodeUrl: r.body.uri });
    const secret = r.body.secret;
    t.equal(base32Decode(secret).length, 20, 'a 160-bit secret');
    const uri = new URL(r.body.uri);
    t.equal(uri.searchParams.get('secret'), secret);
    t.equal(uri.searchParams.get('issuer'), 'Berth');
    t.match(decodeURIComponent(uri.pathname), email, 'labelled with the account');
    t.not((await me.get('auth.generate2FASecret')).body.secret, secret, 'a fresh secret each time');
    t.equal((await me.get('auth.get')).body.is2FAEnabled, false, 'not enabled by generating a secret');
    const plain = await login();
    t.equal(plain.status, 200);
    t.type(plain.body.token, 'string', 'login still answers a token directly');
    t.equal((await anon.get('auth.generate2FASecret')).status, 401);
  });

  t.test('verify2FASetup refuses a wrong pin, then accepts the current code', async t => {
    const { userId, me } = await account('enabling@example.com');
    const organizationId = (await me.get('user.get')).body.organizationId;
    const key = await me.post('user.createApiKey', { name: 'before 2FA', metadata: { organizationId } });
    t.equal(key.status, 200);
    const secret = (await me.get('auth.generate2FASecret')).body.secret;
    const wrong = await me.post('auth.verify2FASetup', { secret, pin: wrongPin(secret) });
    t.equal(wrong.status, 400);
    t.equal(wrong.body.code, 'BAD_REQUEST');
    t.same(
      wrong.body.issues.map((i: { path: string[] }) => i.path),
      [['pin']],
      'the issue names the pin',
    );
    t.equal((await me.get('auth.get')).body.is2FAEnabled, false, 'still off');

    const short = await me.post('auth.verify2FASetup', { secret, pin: '12345' });
    t.equal(short.status, 400, 'a pin has at least 6 digits');
    t.same(
      short.body.issues.map((i: { path: string[] }) => i.path),
      [['pin']],
    );
    const notBase32 = await me.post('auth.verify2FASetup', { secret: 'not-a-secret!', pin: totp(secret) });
    t.equal(notBase32.status, 400);
    t.same(
      notBase32.body.issues.map((i: { path: string[] }) => i.path),
      [['secret']],
    );
    const otherSecret = (await me.get('auth.generate2FASecret')).body.secret;
    t.equal((await me.post('auth.verify2FASetup', { secret: otherSecret, pin: totp(secret) })).status, 400, 'the code must come from the secret given');
    t.equal((await me.get('auth.get')).body.is2FAEnabled, false, 'still off');

    const ok = await me.post('auth.verify2FASetup', { secret, pin: totp(secret) });
    t.equal(ok.status, 200);
    t.match(ok.body, { id: userId, is2FAEnabled: true, secret: null }, 'enabled, and the secret is not echoed');
    t.equal((await me.get('auth.get')).body.is2FAEnabled, true);
    t.equal((await me.get('user.get')).body.user.twoFactorEnabled, true, 'user.get shows it too');
    t.equal((await me.get('auth.get')).status, 200, 'credentials issued before keep working');
    t.equal((await anon.get('user.get', {}, { apiKey: key.body.key })).status, 200);
  });

  t.test('login now answers no token until the second step', async t => {
    const { email, userId, secret, login } = await withTwoFactor('stepping@example.com');
    const first = await login();
    t.equal(first.status, 200);
    t.match(first.body, { token: null, is2FAEnabled: true, id: String });
    t.not(first.body.id, userId, "the id is an opaque token of this login, not the account's id");
    const pending = first.body.id as string;
    const wrongPassword = await anon.post('auth.login', { email, password: 'not the password' });
    t.equal(wrongPassword.status, 401, 'the password is still checked first');

    const wrong = await anon.post('auth.verifyLogin2FA', { id: pending, pin: wrongPin(secret) });
    t.equal(wrong.status, 401, 'a wrong pin is refused');
    t.equal(wrong.body.code, 'UNAUTHORIZED');
    t.same(wrong.body.issues, []);
    t.equal(wrong.body.token, undefined);
    t.equal((await anon.post('auth.verifyLogin2FA', { id: userId, pin: loginPin(secret) })).status, 401, 'the user id and a code are no proof of the first step');

    const right = await anon.post('auth.verifyLogin2FA', { id: pending, pin: loginPin(secret) });
    t.equal(right.status, 200, 'the current code completes the login');
    t.match(right.body, { token: String, is2FAEnabled: true, id: userId, organizationId: admin.organizationId, user: { email, rol: 'admin' } });
    const mine = await anon.get('auth.get', {}, { token: right.body.token });
    t.equal(mine.status, 200, 'and its token works');
    t.equal(mine.body.id, userId);

    const replay = await anon.post('auth.verifyLogin2FA', { id: pending, pin: nextPin(secret).pin });
    t.equal(replay.status, 401, 'the pending login is used up: no second token from it, even with an unused code');
  });

  t.test('a code is good for one login: replaying it, even within its 30 s, is refused', async t => {
    const { secret, login } = await withTwoFactor('replaying@example.com');
    const first = (await login()).body.id;
    const pin = loginPin(secret);
    t.equal((await anon.post('auth.verifyLogin2FA', { id: first, pin })).status, 200);
    const second = (await login()).body.id;
    const again = await anon.post('auth.verifyLogin2FA', { id: second, pin });
    t.equal(again.status, 401, 'the same code is refused');
    const next = await anon.post('auth.verifyLogin2FA', { id: second, pin: loginPin(secret) });
    t.equal(next.status, 200, "the next step's code completes it");
  });

  t.test('verifyLogin2FA without a pending login is 401', async t => {
    const { userId, secret } = await withTwoFactor('unasked@example.com');
    const none = await anon.post('auth.verifyLogin2FA', { id: userId, pin: nextPin(secret).pin });
    t.equal(none.status, 401, 'even with a code the account has not used');
    t.equal(none.body.code, 'UNAUTHORIZED');
    const unknown = await anon.post('auth.verifyLogin2FA', { id: 'no-such-login', pin: totp(secret) });
    t.equal(unknown.status, 401, 'nor for an unknown login');
  });

  t.test('five wrong pins end the pending login; four do not', async t => {
    const { secret, login } = await withTwoFactor('guessing@example.com');
    const first = (await login()).body.id;
    for (let i = 1; i <= 4; i++) t.equal((await anon.post('auth.verifyLogin2FA', { id: first, pin: wrongPin(secret) })).status, 401, `wrong pin ${i}`);
    const fifthTry = await anon.post('auth.verifyLogin2FA', { id: first, pin: loginPin(secret) });
    t.equal(fifthTry.status, 200, 'after four wrong pins the right one still works');

    const second = (await login()).body.id;
    for (let i = 1; i <= 5; i++) t.equal((await anon.post('auth.verifyLogin2FA', { id: second, pin: wrongPin(secret) })).status, 401, `wrong pin ${i}`);
    const late = await anon.post('auth.verifyLogin2FA', { id: second, pin: nextPin(secret).pin });
    t.equal(late.status, 401, 'after five a right, unused pin no longer helps');
    t.equal(late.body.token, undefined);
  });

  t.test('codes are limited per account, not per login: past five failures every attempt waits (429, Retry-After)', async t => {
    const { secret, login } = await withTwoFactor('persistent@example.com');
    const first = (await login()).body.id;
    for (let i = 1; i <= 5; i++) await anon.post('auth.verifyLogin2FA', { id: first, pin: wrongPin(secret) });
    const second = (await login()).body.id;
    t.equal((await anon.post('auth.verifyLogin2FA', { id: second, pin: wrongPin(secret) })).status, 401, 'a new login does not reset the count: the sixth failure');
    const blocked = await anon.raw('/api/auth.verifyLogin2FA', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: second, pin: nextPin(secret).pin }) });
    t.equal(blocked.status, 429, 'then even the right code waits');
    t.equal(blocked.body.code, 'TOO_MANY_REQUESTS');
    const res = await fetch(`${server.url}/api/auth.verifyLogin2FA`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: second, pin: '000000' }) });
    t.equal(res.status, 429);
    t.equal(res.headers.get('retry-after'), '2', 'with Retry-After in seconds: the first wait of a code is two');
    serverClock.advance(2000);
    t.equal((await anon.post('auth.verifyLogin2FA', { id: second, pin: loginPin(secret) })).status, 200, 'once the wait ends, the right code completes the login');
  });

  t.test('the second step is bound to the login that passed the first', async t => {
    const { secret, login } = await withTwoFactor('bound@example.com');
    const other = await withTwoFactor('unbound@example.com');
    const mine = (await login()).body.id;
    const theirs = (await other.login()).body.id;
    t.ok(mine && theirs, 'two pending logins');
    const crossed = await anon.post('auth.verifyLogin2FA', { id: theirs, pin: nextPin(secret).pin });
    t.equal(crossed.status, 401, "the first account's code does not complete the other's login");
    t.equal((await anon.post('auth.verifyLogin2FA', { id: mine, pin: loginPin(secret) })).status, 200, 'it completes its own');
    t.equal((await anon.post('auth.verifyLogin2FA', { id: theirs, pin: loginPin(other.secret) })).status, 200, "as the other's code completes the other's");
  });

  t.test('recovery codes: each completes one login without the authenticator', async t => {
    const { me, login, secret } = await withTwoFactor('recovering@example.com');
    const made = await me.post('auth.generateRecoveryCodes');
    t.equal(made.status, 200);
    const codes = made.body.recoveryCodes as string[];
    t.equal(codes.length, 10, 'ten codes');
    t.ok(
      codes.every(c => /^[0-9]{10}$/.test(c)),
      'of ten digits',
    );
    t.equal(new Set(codes).size, 10, 'all different');
    const first = (await login()).body.id;
    const used = await anon.post('auth.verifyLogin2FA', { id: first, pin: codes[0] });
    t.equal(used.status, 200, 'a recovery code completes a login');
    t.type(used.body.token, 'string');
    const second = (await login()).body.id;
    t.equal((await anon.post('auth.verifyLogin2FA', { id: second, pin: codes[0] })).status, 401, 'once');
    t.equal((await anon.post('auth.verifyLogin2FA', { id: second, pin: codes[1] })).status, 200, 'another one still works');
    const renewed = (await me.post('auth.generateRecoveryCodes')).body.recoveryCodes as string[];
    const third = (await login()).body.id;
    t.equal((await anon.post('auth.verifyLogin2FA', { id: third, pin: codes[2] })).status, 401, 'new codes replace the old');
    t.equal((await anon.post('auth.verifyLogin2FA', { id: third, pin: renewed[0] })).status, 200);
    const key = await me.post('user.createApiKey', { name: 'k', metadata: { organizationId: admin.organizationId } });
    t.equal((await anon.post('auth.generateRecoveryCodes', undefined, { apiKey: key.body.key })).status, 403, 'making codes needs a recent login');
    void secret;
  });

  t.test('disable2FA: login answers a token directly again', async t => {
    const { userId, secret, me, login } = await withTwoFactor('disabling@example.com');
    t.equal((await login()).body.token, null, 'on before');
    const key = await me.post('user.createApiKey', { name: 'k', metadata: { organizationId: admin.organizationId } });
    const byKey = await anon.post('auth.disable2FA', undefined, { apiKey: key.body.key });
    t.equal(byKey.status, 403, 'an API key is no recent login');
    t.match(byKey.body.message, /recent login/);
    const off = await me.post('auth.disable2FA');
    t.equal(off.status, 200);
    t.match(off.body, { id: userId, is2FAEnabled: false });
    t.equal((await me.get('auth.get')).body.is2FAEnabled, false);
    const plain = await login();
    t.equal(plain.status, 200);
    t.match(plain.body, { token: String, is2FAEnabled: false });
    t.equal((await anon.get('auth.get', {}, { token: plain.body.token })).status, 200);
    t.equal((await anon.post('auth.verifyLogin2FA', { id: userId, pin: nextPin(secret).pin })).status, 401, 'no second step to take');
    t.equal((await anon.post('auth.disable2FA')).status, 401, 'disable2FA needs a credential');
  });
});

t.test('the database never holds a secret in plain text', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, EMAIL, PASSWORD);
  const client = new Client(server.url, { token: admin.token });
  const key = await client.post('user.createApiKey', { name: 'stored', prefix: 'brt_', metadata: { organizationId: admin.organizationId } });
  t.equal(key.status, 200);
  const secret = (await client.get('auth.generate2FASecret')).body.secret;
  t.equal((await client.post('auth.verify2FASetup', { secret, pin: totp(secret) })).status, 200);
  const invitation = await client.post('organization.inviteMember', { email: 'invited@example.com', role: 'member' });
  t.equal(invitation.status, 200);
  const generated = (await client.post('auth.generateToken')).body.token;

  // The server's own connection: the same on an external PostgreSQL and on the embedded database.
  const connection = server.kernel.container.cradle.orm.em.getConnection();
  const query = (sql: string, params: unknown[] = []): Promise<Record<string, any>[]> => connection.execute(sql, params);
  const rows = async (table: string) => JSON.stringify(await query(`select * from ${table}`));
  const plain: [string, string][] = [
    ['API key', key.body.key],
    ['API key without its prefix', key.body.key.slice(4)],
    ['TOTP secret', secret],
    ['session token', admin.token],
    ['generated token', generated],
    ['invitation token', invitation.body.token],
    ['password', PASSWORD],
  ];
  for (const table of ['users', 'api_keys', 'sessions', 'invitations', 'members', 'organizations']) {
    const dump = await rows(table);
    t.ok(dump.length > 2, `${table} has rows`);
    for (const [what, value] of plain) t.notOk(dump.includes(value), `${table} does not contain the ${what}`);
  }

  const user = (await query('select password_hash, two_factor_secret, two_factor_enabled from users where email = ?', [EMAIL]))[0]!;
  t.match(user.password_hash, /^scrypt\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/, 'the password is stored as an scrypt hash');
  t.equal(user.two_factor_enabled, true);
  t.match(user.two_factor_secret, /^v1:/, 'the TOTP secret is stored sealed');
  const stored = (await query('select key_hash, start from api_keys where id = ?', [key.body.id]))[0]!;
  t.match(stored.key_hash, /^[0-9a-f]{64}$/, 'the API key is stored as a hash');
  t.equal(stored.start, key.body.start);
  t.ok(key.body.key.startsWith(stored.start));

  // The sealed secret still works: the stored form is usable by the server, not by a reader of the table.
  const pending = await new Client(server.url).post('auth.login', { email: EMAIL, password: PASSWORD });
  t.equal(pending.body.token, null);
  t.equal((await new Client(server.url).post('auth.verifyLogin2FA', { id: pending.body.id, pin: totp(secret) })).status, 200);
});
