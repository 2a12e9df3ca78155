// The libsql driver: the contract's conformance suite against berth-test/libsql:1 (the stand-in of the
// public libsql-server image, test/stand-ins), queried by the real @libsql/client, plus the exact
// command line, environment and URLs the peer's clients see.
import t from 'tap';
import { basicClient } from './basic-client.ts';
import { descriptorConformance, TEST_LIBSQL_IMAGE } from '@berth/core/testing';
import { MIN_REGISTERED_SECRET_LENGTH, OutputFilter, SECRET_MASK, type DatabaseCredentials } from '@berth/core';
import { deploySecrets } from '@berth/plugin-workloads';
import { driverConformance } from '@berth/plugin-workloads/testing';
import provider, { LibsqlDriver } from '../src/index.ts';

const driver = new LibsqlDriver();

t.test('the provider descriptor', async t => void (await descriptorConformance(t, provider, 'database')));

/** Statements through the HTTP API from inside the container, with the credentials (the driver's own Hrana over bash); prints the last answer. */
const sql = (c: DatabaseCredentials, ...statements: string[]) => {
  const check = driver.readinessCheck(c);
  const hrana = check.cmd[2]!.replace(/q 'SELECT 1'$/, '');
  const script = statements.map((_, i) => `r=$(q "$BERTH_S${i}"); ok "$r"`).join('\n');
  const env = Object.fromEntries(statements.map((s, i) => [`BERTH_S${i}`, JSON.stringify(s).slice(1, -1)]));
  return { cmd: ['bash', '-c', `${hrana}${script}\nprintf '%s' "$r"`], env: { ...check.env, ...env } };
};

driverConformance(t, driver, {
  connect: async url => {
    const client = basicClient(url);
    try {
      const rs = await client.execute('SELECT 1 AS one');
      if (rs.rows[0]?.one !== 1) throw new Error(`SELECT 1 answered ${JSON.stringify(rs.rows)}`);
    } finally {
      client.close();
    }
  },
  authError: { message: /HTTP status 401/ },
  image: TEST_LIBSQL_IMAGE,
  passwords: { valid: ['', 'Pa55word@#%^&*()_+-=[]{}|;:,.<>?~`'], invalid: ["it's", 'a b', 'é'] },
  data: {
    write: c => sql(c, 'CREATE TABLE IF NOT EXISTS berth_marker (v TEXT)', "INSERT INTO berth_marker VALUES ('kept')"),
    clear: c => sql(c, 'DELETE FROM berth_marker'),
    read: c => sql(c, 'SELECT v FROM berth_marker'),
    expect: /"value":"kept"/,
  },
});

t.test("libsql: what the service and the peer's clients see", async t => {
  const c: DatabaseCredentials = { databaseName: null, databaseUser: 'turso', databasePassword: 's3cret/@', databaseRootPassword: null };
  t.same(driver.defaultImage, { current: 'ghcr.io/tursodatabase/libsql-server:v0.24.32', older: 'ghcr.io/tursodatabase/libsql-server:v0.24.32' });
  t.same(driver.fields, { databaseName: false, databaseUser: true, databaseRootPassword: false });
  t.same(driver.containerEnv(c), { SQLD_NODE: 'primary', SQLD_HTTP_AUTH: `basic:${Buffer.from('turso:s3cret/@').toString('base64')}` }, "the peer's basic auth of user:password");
  t.same(
    driver.containerEnv(c, { sqldNode: 'replica', sqldPrimaryUrl: 'http://primary:5001' }),
    { SQLD_NODE: 'replica', SQLD_HTTP_AUTH: `basic:${Buffer.from('turso:s3cret/@').toString('base64')}`, SQLD_PRIMARY_URL: 'http://primary:5001' },
    'a replica names its primary',
  );
  const args = ['--db-path', '/var/lib/sqld/iku.db', '--http-listen-addr', '0.0.0.0:8080', '--grpc-listen-addr', '0.0.0.0:5001', '--admin-listen-addr', '0.0.0.0:5000'];
  t.same(driver.startCommand(c), { command: 'sqld', args }, "the peer's command line as an argument array");
  t.same(driver.startCommand(c, { enableNamespaces: true }).args, [...args, '--enable-namespaces'], 'namespaces when the record enables them');
  t.equal(driver.dataPath, '/var/lib/sqld');
  t.equal(driver.internalPort, 8080);
  t.same(driver.extraPorts, { externalGRPCPort: 5001, externalAdminPort: 5000 });
  t.same([...driver.omitProcedures], ['changePassword', 'search', 'saveExternalPort'], "the peer's libsql router has none of these");
  t.equal(driver.connectionUrl(c, 'db', 8080), 'http://turso:s3cret%2F%40@db:8080');
  t.same(driver.dumpCommand().cmd, ['tar', '-c', '-f', '-', '-C', '/var/lib/sqld', 'iku.db'], "the peer's backup: the database directory as a tar");
  t.same(driver.recordIssue({ sqldNode: 'replica', sqldPrimaryUrl: null }), { field: 'sqldPrimaryUrl', message: "sqldPrimaryUrl is required when sqldNode is 'replica'" });
  t.match(driver.recordIssue({ sqldNode: 'primary', sqldPrimaryUrl: 'http://x' }), { field: 'sqldPrimaryUrl' });
  t.match(driver.recordIssue({ sqldNode: 'replica', sqldPrimaryUrl: 'http://x', externalGRPCPort: 5001 }), { field: 'externalGRPCPort' });
  t.equal(driver.recordIssue({ sqldNode: 'primary', sqldPrimaryUrl: null, externalGRPCPort: 5001 }), null);
  t.equal(
    driver.inventoryLines(
      `HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{"baton":null,"results":[{"type":"ok","response":{"type":"execute","result":{"rows":[[{"type":"text","value":"a"},{"type":"integer","value":"3"}]]}}}]}`,
    ),
    'a\t3',
  );
  t.equal(driver.inventoryLines(''), '', 'no table: no line');
  // SQLD_HTTP_AUTH is the password base64-encoded: masking the password alone would leave it readable.
  const env = driver.containerEnv(c);
  const filter = new OutputFilter();
  for (const secret of deploySecrets(driver, c, env)) filter.add(secret, MIN_REGISTERED_SECRET_LENGTH);
  const quoted = filter.apply(`the service's env: SQLD_HTTP_AUTH=${env.SQLD_HTTP_AUTH} SQLD_NODE=primary`);
  t.equal(quoted, `the service's env: SQLD_HTTP_AUTH=${SECRET_MASK} SQLD_NODE=primary`, 'a deploy masks SQLD_HTTP_AUTH as it masks the password');
  t.notOk(quoted.includes(Buffer.from('turso:s3cret/@').toString('base64')), 'the encoded credentials are not in the text');
  t.throws(() => driver.changePasswordCommand(), { message: /libsql\.update, then deploy/ });
  t.throws(() => driver.restoreCommand(), { message: /cannot restore into a running server/ });
});
