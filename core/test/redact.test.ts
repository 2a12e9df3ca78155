// The output filter every recorded or answered command output goes through: a join token as
// `docker swarm init` prints it is cut, a record's secret-typed values are masked (8 characters or
// longer), and text filtered twice stays the same.
import t from 'tap';
import { JOIN_TOKEN_MASK, MAX_RECORDED_TEXT, OutputFilter, SECRET_MASK, isSecretField, redactInput, redactOutput, secretFieldValues } from '../src/redact.ts';
import { isStorable } from '../src/validation.ts';

// What `docker swarm init` writes on its stdout (Docker 20 to 27), with a token of the real shape.
const TOKEN = 'SWMTKN-1-3pu6hszjas19xyp7ghgosyx9k8atbfcr8p2is99znpy26u2lkl-1awxwuwd3z9j1z3puu7rcgdbx';
const SWARM_INIT = `Swarm initialized: current node (bvz81updecsj6wjz393c09vti) is now a manager.

To add a worker to this swarm, run the following command:

    docker swarm join --token ${TOKEN} 10.55.0.2:2377

To add a manager to this swarm, run 'docker swarm join-token manager' and follow the instructions.

`;

t.test('a join token as docker swarm init prints it is cut whole', async t => {
  const out = redactOutput(SWARM_INIT);
  t.notMatch(out, TOKEN, 'the token is gone');
  t.notMatch(out, /SWMTKN-1-/, 'nothing of it stays');
  t.notMatch(out, '3pu6hszjas19xyp7ghgosyx9k8atbfcr8p2is99znpy26u2lkl', 'not even its CA digest');
  t.match(out, `docker swarm join --token ${JOIN_TOKEN_MASK} 10.55.0.2:2377`, 'the rest of the line stays readable');
  t.match(out, 'Swarm initialized: current node (bvz81updecsj6wjz393c09vti) is now a manager.', 'the other lines are as they were');
  t.equal(redactOutput(out), out, 'filtered twice: the same text');
  t.equal(redactOutput(`a${TOKEN}\n${TOKEN}`), `a${JOIN_TOKEN_MASK}\n${JOIN_TOKEN_MASK}`, 'every token, wherever it stands');
});

t.test("a record's secret-typed fields are masked from 8 characters on", async t => {
  const record = {
    name: 'db-main',
    databasePassword: 'correct-horse-battery',
    databaseRootPassword: 'short',
    enabled: 'true',
    metricsConfig: { server: { token: 'metrics-token-1234', port: 4500 } },
    env: [{ webhookSecret: 'whsec_0123456789' }],
    publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPublic',
    sshKeyId: 'key-0123456789abcdef',
  };
  t.same(secretFieldValues(record).sort(), ['correct-horse-battery', 'metrics-token-1234', 'whsec_0123456789'], 'the secret-typed values, nested ones too');
  const filter = new OutputFilter(record);
  const text = 'login db-main with correct-horse-battery (root: short), enabled=true, token metrics-token-1234, whsec_0123456789, key-0123456789abcdef';
  t.equal(
    filter.apply(text),
    `login db-main with ${SECRET_MASK} (root: short), enabled=true, token ${SECRET_MASK}, ${SECRET_MASK}, key-0123456789abcdef`,
    'the long secrets masked; short values, names and ids left',
  );
  t.equal(filter.apply(`${TOKEN} correct-horse-battery`), `${JOIN_TOKEN_MASK} ${SECRET_MASK}`, 'tokens and secrets in one pass');
  t.ok(['password', 'databasePassword', 'refreshToken', 'privateKey', 'apiKey', 'webhookSecret', 'authorization'].every(isSecretField), 'secret-typed names');
  t.notOk(['publicKey', 'sshKeyId', 'name', 'keyAuth', 'enabled'].some(isSecretField), 'other names');
});

t.test('explicitly added secrets: the longest first, a minimum length of the caller’s choosing', async t => {
  const filter = new OutputFilter().add('abcdefgh-1').add('abcdefgh-1-and-more').add('tiny').add('tiny', 3).add(null);
  t.equal(filter.apply('abcdefgh-1-and-more abcdefgh-1 tiny'), `${SECRET_MASK} ${SECRET_MASK} ${SECRET_MASK}`);
  t.equal(new OutputFilter().add('tiny').apply('tiny'), 'tiny', 'under 8 characters by default: left');
});

t.test("a call's input as the audit log keeps it: secrets masked, and only text PostgreSQL can store", async t => {
  const cutInPair = `${'x'.repeat(MAX_RECORDED_TEXT - 1)}\ud83d\ude80`;
  const kept = redactInput({ name: 'a\u0000b', note: 'a\ud800b', ['k\u0000']: 'v', password: 'a\u0000-secret', list: ['\udc00', 'emoji \ud83d\ude80 pair'], long: cutInPair }) as Record<
    string,
    unknown
  >;
  t.same(
    { ...kept, long: undefined },
    { name: 'a\ufffdb', note: 'a\ufffdb', 'k\ufffd': 'v', password: SECRET_MASK, list: ['\ufffd', 'emoji \ud83d\ude80 pair'], long: undefined },
    'a NUL and an unpaired surrogate, in values and keys, read as U+FFFD; a whole pair is kept; a secret is masked',
  );
  t.equal(kept.long, `${'x'.repeat(MAX_RECORDED_TEXT - 1)}\ufffd…`, 'a long text cut inside a pair keeps no half of it');
  t.ok(isStorable(JSON.stringify(kept)), 'the whole input is storable');
});
