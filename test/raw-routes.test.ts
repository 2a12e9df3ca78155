// The raw routes: every route the server registers outside the OpenAPI document's procedures (the
// push hooks, the GitHub App's hook, the Stripe webhook, the git providers' setup, authorize and
// callback returns, the deployment log stream, /metrics, /health, the document's own routes), read
// from Fastify's route list (kernel.routes), not from a hand list. Each POST gets malformed JSON,
// wrong types, NUL bytes and unpaired surrogates, invalid UTF-8, wrong content types, a body over
// its limit (declared and chunked), a truncated body, and missing and malformed signatures beside
// every provider's event headers; each GET malformed query strings, without and with an API key.
// Real records stand behind them: a workload of every kind that takes pushes, with a webhookSecret
// and a source that would deploy; a GitHub App connection with its webhook secret; GitLab and Gitea
// connections with their OAuth states; billing on (the Stripe stand-in) with its webhook secret; a
// deployment to follow. Nothing may answer 5xx or hang; every fuzzed delivery is refused for its
// signature; no table grows but the delivery log, by exactly the deliveries it logged. Positive
// controls first: the same body, validly signed, queues a deployment at each workload's hook, is
// accepted by the GitHub App hook and by the Stripe webhook.
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import t from 'tap';
import { signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';
import { MANIFEST_WEBHOOK_SECRET, startFakeGithub } from '../providers/git-github/test/github-api.ts';
import { startFakeGitlab } from '../providers/git-gitlab/test/gitlab-api.ts';
import { startFakeGitea } from '../providers/git-gitea/test/gitea-api.ts';
import { startStripeStandIn } from '../plugins/billing/test/stripe-stand-in.ts';
import { AT_ONCE, inPool } from './openapi-operations.ts';

t.setTimeout(240_000);

/**
 * The tables a fuzzed request may add rows to, with why. Every other table of the server's database
 * must hold as many rows after the walk as before it.
 */
const MAY_GROW: Record<string, string> = {
  webhook_deliveries:
    "the push hooks' delivery log (plugins/deploy-hook/src/entities.ts): a delivery to a workload's hook is logged whatever its answer, a refused signature too (signatureOk false), so that its owner sees who knocked; the GitHub App hook and the Stripe webhook log nothing they refuse",
};

const STRIPE_KEY = 'sk_test_raw_routes_0123456789';
const STRIPE_WEBHOOK_SECRET = 'whsec_raw_routes_secret';
/** A key that is no workload's secret: what the fuzz signs with where it signs at all. */
const WRONG_KEY = 'not-the-webhook-secret-of-anything';
const INSTALLATION_ID = 77;
const hmac = (key: string, data: string | Buffer) => createHmac('sha256', key).update(data).digest('hex');
const stripeSignature = (key: string, body: string) => {
  const at = Math.floor(Date.now() / 1000);
  return `t=${at},v1=${hmac(key, `${at}.${body}`)}`;
};

/**
 * One body every POST route would act on once signed: a push of the branch the workloads watch
 * (GitHub's, Gitea's and a plain POST's fields), the GitHub App's installation and a repository, and
 * a Stripe event. The fuzz sends it unsigned or signed with a wrong key; the positive controls sign it.
 */
const DELIVERY = JSON.stringify({
  ref: 'refs/heads/main',
  before: '0'.repeat(40),
  after: 'a'.repeat(40),
  head_commit: { id: 'a'.repeat(40), message: 'raw routes' },
  commits: [],
  repository: { full_name: 'team/app' },
  installation: { id: INSTALLATION_ID },
  id: 'evt_raw_routes',
  object: 'event',
  type: 'customer.deleted',
  data: { object: { id: 'cus_raw_routes', object: 'customer' } },
});

// ---------------------------------------------------------------- the server and its records
const stripe = await startStripeStandIn(STRIPE_KEY, { products: [], prices: [] });
t.teardown(() => stripe.close());
const appKey = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
const github = await startFakeGithub(t, { publicKeyPem: appKey.publicKey, privateKeyPem: appKey.privateKey, appId: '4242', installationId: INSTALLATION_ID });
const gitlab = await startFakeGitlab(t);
const gitea = await startFakeGitea(t);
// No job runs (jobs: false): a queued deployment stays queued, the collector takes no sample and the
// outbox sends nothing, so every row counted before and after the walk is one a request made. The
// delivery log keeps every row (webhookDeliveriesKept), so that its growth can be counted exactly.
const server = await startTestServer({ proxy: 'none', jobs: false, webhookDeliveriesKept: 10_000, stripeSecretKey: STRIPE_KEY, stripeWebhookSecret: STRIPE_WEBHOOK_SECRET, stripeApiUrl: stripe.url });
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const c = admin.client;
const ok = (what: string, r: Reply) => {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
};
const { environmentId } = ok('project.create', await c.post('project.create', { name: 'raw routes' })).environment;
// A SCIM provider's token: /scim/v2 takes it (Authorization: Bearer), not an API key.
const { scimToken } = ok('scim.generateToken', await c.post('scim.generateToken', { providerId: 'raw-routes' }));
const scimAuth = (url: string): Record<string, string> => (url.startsWith('/scim/') ? { authorization: `Bearer ${scimToken}` } : {});

/** A workload of each kind that takes pushes: its hook's path, its secret and how to read its delivery log. */
interface Hooked {
  kind: string;
  id: string;
  idField: string;
  refreshToken: string;
  path: string;
  secret: string;
}
// A source that would deploy (a git URL on a closed loopback port: with no job running, queued is as far as a deployment gets).
const source = { sourceType: 'git', customGitUrl: 'http://127.0.0.1:9/raw-routes.git', customGitBranch: 'main', autoDeploy: true };
const makers: Record<string, (secret: string) => Promise<{ id: string; refreshToken: string }>> = {
  application: async webhookSecret => {
    const made = ok('application.create', await c.post('application.create', { name: 'hooked', environmentId }));
    ok('application.update', await c.post('application.update', { applicationId: made.applicationId, ...source, webhookSecret }));
    return { id: made.applicationId, refreshToken: made.refreshToken };
  },
  compose: async webhookSecret => {
    const made = ok('compose.create', await c.post('compose.create', { name: 'hooked', environmentId, composeFile: 'services:\n  web:\n    image: berth-test/busybox:1\n' }));
    ok('compose.update', await c.post('compose.update', { composeId: made.composeId, ...source, webhookSecret }));
    return { id: made.composeId, refreshToken: ok('compose.one', await c.get('compose.one', { composeId: made.composeId })).refreshToken };
  },
};
const pushing = server.kernel.container.cradle.workloads.kinds().filter(k => k.push);
const hooked: Hooked[] = [];
for (const kind of pushing.filter(k => makers[k.kind])) {
  const secret = randomBytes(24).toString('hex');
  const { id, refreshToken } = await makers[kind.kind]!(secret);
  const hookPath = kind.push!.hookPath;
  hooked.push({ kind: kind.kind, id, idField: kind.idField, refreshToken, secret, path: `/api/deploy/${hookPath ? `${hookPath}/` : ''}${refreshToken}` });
}

// A GitHub App connection made as a user makes one (the manifest flow, through the setup route),
// installed: its webhook secret signs the App's deliveries.
const { state: initState } = ok('github.setupState', await c.post('github.setupState', { githubUrl: github.url }));
const setup = await fetch(`${server.url}/api/providers/github/setup?${new URLSearchParams({ code: github.manifestCode(), state: initState, installation_id: String(INSTALLATION_ID) })}`, {
  headers: { 'x-api-key': admin.apiKey },
  redirect: 'manual',
});
const githubId = new URL(setup.headers.get('location') ?? '/', server.url).searchParams.get('githubId');
if (setup.status !== 307 || !githubId) throw new Error(`the GitHub App connection: ${setup.status} ${await setup.text()}`);
const { state: installState } = ok('github.installState', await c.post('github.installState', { githubId }));
// GitLab and Gitea connections with their OAuth applications, and the states their authorizations carry.
const pair = gitlab.issue(3600);
const { gitlabId } = ok(
  'gitlab.create',
  await c.post('gitlab.create', {
    authId: admin.userId,
    name: 'raw routes',
    gitlabUrl: gitlab.url,
    applicationId: gitlab.app.clientId,
    secret: gitlab.app.secret,
    redirectUri: gitlab.app.redirectUri,
    accessToken: pair.accessToken,
    refreshToken: pair.refreshToken,
    expiresAt: pair.expiresAt,
  }),
);
const { state: gitlabState } = ok('gitlab.authorization', await c.post('gitlab.authorization', { gitlabId }));
const { giteaId } = ok(
  'gitea.create',
  await c.post('gitea.create', { name: 'raw routes', giteaUrl: gitea.url, clientId: gitea.app.clientId, clientSecret: gitea.app.clientSecret, redirectUri: gitea.app.redirectUri }),
);
const authorize = await fetch(`${server.url}/api/providers/gitea/authorize?${new URLSearchParams({ giteaId })}`, { headers: { 'x-api-key': admin.apiKey }, redirect: 'manual' });
const giteaState = new URL(authorize.headers.get('location') ?? 'http://x/').searchParams.get('state');
if (authorize.status !== 307 || !giteaState) throw new Error(`gitea authorize: ${authorize.status} ${await authorize.text()}`);

// A SAML provider (plugins/sso): its sign-in start and assertion consumer service get every body and query.
ok(
  'sso.register',
  await c.post('sso.register', {
    providerId: 'raw-routes-saml',
    issuer: 'https://idp.raw-routes.example.com',
    domains: ['raw-routes.example.com'],
    samlConfig: { entryPoint: 'https://idp.raw-routes.example.com/sso', cert: appKey.publicKey, callbackUrl: 'https://berth.example.com/acs', spMetadata: {} },
  }),
);

/** POSTs a body to a raw route. */
const post = async (path: string, body: string, headers: Record<string, string>) => {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed };
};
const signedPush = (secret: string) => ({ 'x-github-event': 'push', 'x-github-delivery': randomBytes(8).toString('hex'), 'x-hub-signature-256': `sha256=${hmac(secret, DELIVERY)}` });

// The deployments the positive controls queue: the log stream follows one of them.
const queued: string[] = [];

t.test('positive controls: the body the fuzz sends, validly signed, is taken by every hook and the Stripe webhook', async t => {
  t.same(
    pushing.filter(k => !makers[k.kind]).map(k => k.kind),
    [],
    'every kind that takes pushes has a workload here',
  );
  for (const w of hooked) {
    const answer = await post(w.path, DELIVERY, signedPush(w.secret));
    t.match(answer, { status: 202, body: { message: 'deployment queued', deploymentId: String } }, `${w.kind}: signed with its webhookSecret, a push of its branch is queued`);
    const [logged] = ok(`${w.kind}.webhookDeliveries`, await c.get(`${w.kind}.webhookDeliveries`, { [w.idField]: w.id }));
    t.match(logged, { signatureOk: true, statusCode: 202, deploymentId: answer.body.deploymentId }, `${w.kind}: its delivery log says the signature held`);
    queued.push(answer.body.deploymentId);
  }
  const app = await post('/api/deploy/github', DELIVERY, signedPush(MANIFEST_WEBHOOK_SECRET));
  t.match(
    app,
    { status: 200, body: { reason: 'no application or compose stack deploys team/app through this GitHub App' } },
    "the GitHub App hook: signed with the connection's webhook secret, the delivery gets past the signature to the repository",
  );
  const ping = await post('/api/deploy/github', DELIVERY, { ...signedPush(MANIFEST_WEBHOOK_SECRET), 'x-github-event': 'ping' });
  t.match(ping, { status: 200, body: { reason: 'ping received: the hook is active' } }, 'and its ping is answered');
  const event = await post('/api/stripe/webhook', DELIVERY, { 'stripe-signature': stripeSignature(STRIPE_WEBHOOK_SECRET, DELIVERY) });
  t.match(event, { status: 200, body: { received: true } }, "the Stripe webhook: signed with the endpoint's secret, the event is received");
  // Cancelled, the deployments are finished: the log stream of one answers and ends.
  for (const deploymentId of queued) ok('deployment.killProcess', await c.post('deployment.killProcess', { deploymentId }));
});

// ---------------------------------------------------------------- the walk
interface Request {
  route: string;
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer | (() => ReadableStream<Uint8Array>);
  /** Content-Length larger than the bytes sent, the client's side closed after them. */
  truncated?: boolean;
  /** The status a refusal takes here when it is not the route's own (the signature's). */
  refused?: number;
}
/** What a request got: a status, or the connection closed without one (acceptable only for a truncated body). */
type Outcome = { status: number; text: string } | { closed: string };

/** Sends a request whose Content-Length promises more than it sends, then closes its side: the server must answer or close, not wait. */
function sendTruncated(r: Request): Promise<Outcome> {
  const { hostname, port } = new URL(server.url);
  const body = Buffer.from(typeof r.body === 'string' ? r.body : '');
  return new Promise(resolve => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const deadline = setTimeout(() => {
      socket.destroy();
      resolve({ closed: 'hung: no answer and no close within 15 s' });
    }, 15_000);
    socket.on('connect', () => {
      const head = [`${r.method} ${r.path} HTTP/1.1`, `host: ${hostname}:${port}`, `content-length: ${body.length + 1000}`, ...Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      socket.end(body);
    });
    socket.on('data', chunk => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(deadline);
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve(status ? { status: Number(status[1]), text: text.slice(text.indexOf('\r\n\r\n') + 4) } : { closed: 'closed without an answer' });
    });
  });
}

async function send(r: Request): Promise<Outcome> {
  if (r.truncated) return sendTruncated(r);
  try {
    const body = typeof r.body === 'function' ? r.body() : r.body;
    const res = await fetch(`${server.url}${r.path}`, {
      method: r.method,
      headers: r.headers ?? {},
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(15_000),
      ...(typeof r.body === 'function' ? { duplex: 'half' } : {}),
    } as RequestInit); // cast: `duplex` (which a streamed body needs) is not in the DOM's RequestInit
    return { status: res.status, text: await res.text() };
  } catch (e) {
    return { closed: `${(e as Error).name}: ${(e as Error).message} ${String((e as { cause?: { code?: string } }).cause?.code ?? '')}`.trim() };
  }
}

const UNKNOWN_TOKEN = 'no-workload-has-this-refresh-token';
/** The values each path parameter takes; `focus` ones get every body and header (the others one plain delivery each). */
const PARAM_VALUES: Record<string, { value: string; focus?: boolean }[]> = {
  refreshToken: [
    ...hooked.map(w => ({ value: w.refreshToken, focus: true })),
    { value: UNKNOWN_TOKEN, focus: true },
    { value: 'x'.repeat(300) },
    { value: '%00' },
    { value: `${hooked[0]!.refreshToken}%00` },
    { value: '%ED%A0%80' },
    { value: '%FF' },
    { value: '%' },
    { value: '..%2F..%2Fhealth' },
  ],
  // /scim/v2's: the owner (listed, never changed through SCIM: every change and DELETE of them is refused, so the walk removes no one), a role, the discovery documents'.
  userId: [{ value: admin.userId, focus: true }, { value: 'no-such-user' }, { value: '%00' }, { value: 'x'.repeat(300) }, { value: '%FF' }, { value: '%ED%A0%80' }],
  groupId: [{ value: 'admin', focus: true }, { value: 'no-such-group' }, { value: '%00' }, { value: 'x'.repeat(300) }, { value: '%FF' }],
  resourceTypeId: [{ value: 'User', focus: true }, { value: '%00' }, { value: 'x'.repeat(300) }],
  schemaId: [{ value: 'urn:ietf:params:scim:schemas:core:2.0:User', focus: true }, { value: '%00' }, { value: '%FF' }],
  providerId: [{ value: 'raw-routes-saml', focus: true }, { value: 'no-such-provider', focus: true }, { value: '%00' }, { value: 'x'.repeat(300) }, { value: '%FF' }, { value: '%ED%A0%80' }],
  hookPath: [...pushing.filter(k => k.push!.hookPath).map(k => ({ value: k.push!.hookPath, focus: true })), { value: 'no-such-kind' }, { value: '%00' }, { value: 'x'.repeat(100) }, { value: '%FF' }],
  '*': [
    { value: 'index.html', focus: true },
    { value: '' },
    { value: 'swagger-ui.css' },
    { value: '..%2F..%2F..%2Fpackage.json' },
    { value: '%2e%2e/%2e%2e/%2e%2e/package.json' },
    { value: '%00' },
    { value: 'x'.repeat(3000) },
    { value: '%ED%A0%80' },
  ],
};

/** Every path of a route's URL with its parameters filled in, and whether it is a focus path. */
function pathsOf(url: string): { path: string; focus: boolean }[] {
  let paths = [{ path: '', focus: true }];
  for (const segment of url.split('/').slice(1)) {
    const param = segment === '*' ? '*' : segment.startsWith(':') ? segment.slice(1) : null;
    const values = param ? (PARAM_VALUES[param] ?? [{ value: `no-values-for-${param}` }]) : [{ value: segment, focus: true }];
    paths = paths.flatMap(p => values.map(v => ({ path: `${p.path}/${v.value}`, focus: p.focus && v.focus === true })));
  }
  return paths;
}

const HUGE = Buffer.alloc(6 * 1024 * 1024, 'a');
const nested = (depth: number) => '{"a":['.repeat(depth) + '1' + ']}'.repeat(depth);
const form = (payload: string) => `payload=${payload}`;
/** Bodies: each with its content type and, where it is a provider's own shape, that provider's event headers. */
const BODIES: { label: string; body: string | Buffer; type?: string; headers?: Record<string, string>; refused?: number }[] = [
  // malformed
  { label: 'malformed {"a":', body: '{"a":' },
  { label: 'malformed {', body: '{' },
  { label: 'malformed ]', body: ']' },
  { label: 'cut short', body: DELIVERY.slice(0, DELIVERY.length / 2) },
  { label: 'empty', body: '' },
  { label: 'blank', body: '  \n ' },
  { label: 'a raw NUL', body: '\u0000' },
  { label: 'a raw NUL in a string', body: '{"ref":"refs/heads/ma\u0000in"}' },
  { label: 'deep nesting', body: nested(5000) },
  { label: 'a long array', body: JSON.stringify(Array.from({ length: 100_000 }, (_, i) => i)) },
  // wrong types
  { label: 'type []', body: '[]' },
  { label: 'type 12', body: '12' },
  { label: 'type "str"', body: '"str"' },
  { label: 'type null', body: 'null' },
  { label: 'type true', body: 'true' },
  { label: 'ref 12, repository []', body: '{"ref":12,"repository":[]}' },
  { label: 'ref [], commits "x", head_commit []', body: '{"ref":["refs/heads/main"],"commits":"x","head_commit":[],"after":{}}' },
  { label: 'commits of wrong types', body: '{"ref":"refs/heads/main","commits":[null,12,{"added":"x","modified":[1,null],"removed":{}}]}' },
  { label: 'installation.id "x"', body: '{"installation":{"id":"x"},"repository":{"full_name":12}}' },
  { label: 'installation.id 1e30', body: '{"installation":{"id":1e30}}' },
  { label: 'installation.id of 20 digits', body: '{"installation":{"id":"99999999999999999999"},"repository":{"full_name":"team/app"}}' },
  { label: 'ping: hook.app_id of 20 digits', body: '{"hook":{"app_id":"99999999999999999999"}}', headers: { 'x-github-event': 'ping' } },
  { label: 'ping: hook.app_id []', body: '{"hook":{"app_id":[]}}', headers: { 'x-github-event': 'ping' } },
  { label: 'pull_request of wrong types', body: '{"action":[],"number":"1","pull_request":{"number":"x","head":[],"base":12,"labels":"x","user":[]}}', headers: { 'x-github-event': 'pull_request' } },
  { label: 'gitlab push of wrong types', body: '{"object_kind":"push","ref":12,"commits":{},"after":5,"checkout_sha":[]}', headers: { 'x-gitlab-event': 'Push Hook' } },
  { label: 'gitlab merge request of wrong types', body: '{"object_kind":"merge_request","object_attributes":"x","project":[]}', headers: { 'x-gitlab-event': 'Merge Request Hook' } },
  { label: 'bitbucket push of wrong types', body: '{"push":{"changes":"x"}}', headers: { 'x-event-key': 'repo:push' } },
  { label: 'bitbucket change of wrong types', body: '{"push":{"changes":[{"new":{"name":12,"type":[],"target":"x"}}]}}', headers: { 'x-event-key': 'repo:push' } },
  { label: 'bitbucket pull request of wrong types', body: '{"pullrequest":"x"}', headers: { 'x-event-key': 'pullrequest:created' } },
  { label: 'docker hub push of wrong types', body: '{"push_data":{"tag":null},"repository":{"repo_name":12}}', headers: {} },
  { label: 'stripe event of wrong types', body: '{"id":12,"object":[],"type":{},"data":null}' },
  // NUL bytes and unpaired surrogates (escaped in the JSON: the parsed string holds them)
  { label: 'NUL in a github push', body: '{"ref":"refs/heads/ma\\u0000in","after":"\\u0000","head_commit":{"id":"a\\u0000","message":"m\\u0000"},"commits":[{"added":["a\\u0000"]}]}' },
  { label: 'NUL in a tag push', body: '{"ref":"refs/tags/v\\u0000"}' },
  { label: 'NUL in a plain push', body: '{"ref":"refs/heads/\\u0000","after":"\\u0000"}', headers: {} },
  { label: 'surrogates in a github push', body: '{"ref":"refs/heads/\\ud800","after":"\\udc00","head_commit":{"id":"\\ud800","message":"\\udfff"}}' },
  { label: 'NUL in the installation and repository', body: '{"installation":{"id":"77\\u0000"},"repository":{"full_name":"team/app\\u0000"}}' },
  { label: 'NUL in a key', body: '{"ref\\u0000":"refs/heads/main","\\ud800":1}' },
  {
    label: 'NUL in a gitlab push',
    body: '{"object_kind":"push","ref":"refs/heads/\\u0000","checkout_sha":"\\u0000","commits":[{"id":"\\u0000","message":"\\u0000"}]}',
    headers: { 'x-gitlab-event': 'Push Hook' },
  },
  { label: 'NUL in a gitea push', body: '{"ref":"refs/heads/\\u0000","after":"\\ud800"}', headers: { 'x-gitea-event': 'push' } },
  {
    label: 'NUL in a bitbucket push',
    body: '{"push":{"changes":[{"new":{"name":"\\u0000","type":"branch","target":{"hash":"\\u0000","message":"\\ud800"}}}]}}',
    headers: { 'x-event-key': 'repo:push' },
  },
  { label: 'NUL in a docker hub push', body: '{"push_data":{"tag":"\\u0000"},"repository":{"repo_name":"a\\u0000"}}', headers: {} },
  {
    label: 'NUL in a pull request',
    body: '{"action":"opened","number":1,"pull_request":{"id":1,"number":1,"title":"\\u0000","head":{"ref":"\\u0000","sha":"\\ud800"},"base":{"ref":"main\\u0000"}}}',
    headers: { 'x-github-event': 'pull_request' },
  },
  {
    label: 'NUL in a gitlab merge request',
    body: '{"object_kind":"merge_request","object_attributes":{"id":1,"iid":1,"action":"open","title":"\\u0000","source_branch":"\\u0000","target_branch":"main\\u0000","last_commit":{"id":"\\ud800"}}}',
    headers: { 'x-gitlab-event': 'Merge Request Hook' },
  },
  {
    label: 'NUL in a bitbucket pull request',
    body: '{"pullrequest":{"id":1,"title":"\\u0000","source":{"branch":{"name":"\\u0000"},"commit":{"hash":"\\ud800"}},"destination":{"branch":{"name":"main"}}}}',
    headers: { 'x-event-key': 'pullrequest:created' },
  },
  { label: 'NUL in a stripe event', body: '{"id":"evt_\\u0000","object":"event","type":"\\ud800","data":{"object":{"id":"\\u0000"}}}' },
  { label: 'invalid UTF-8', body: Buffer.concat([Buffer.from('{"ref":"refs/heads/'), Buffer.from([0xed, 0xa0, 0x80, 0xff, 0xfe]), Buffer.from('","after":"x"}')]) },
  // wrong content types
  { label: 'text/plain', body: 'hello', type: 'text/plain' },
  { label: 'text/plain holding the delivery', body: DELIVERY, type: 'text/plain' },
  { label: 'form with a malformed payload', body: form('%7B%22a%22%3A'), type: 'application/x-www-form-urlencoded' },
  { label: 'form with a NUL payload', body: form(encodeURIComponent('{"ref":"refs/heads/\\u0000","after":"\\u0000"}')), type: 'application/x-www-form-urlencoded' },
  { label: 'form with a bad escape', body: 'payload=%ZZ%&payload', type: 'application/x-www-form-urlencoded' },
  { label: 'form without payload', body: 'a=b&c', type: 'application/x-www-form-urlencoded' },
  { label: 'form holding the delivery', body: form(encodeURIComponent(DELIVERY)), type: 'application/x-www-form-urlencoded' },
  { label: 'octet-stream', body: Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]), type: 'application/octet-stream' },
  { label: 'multipart garbage', body: '--x\r\ncontent-disposition: form-data; name="payload"\r\n\r\n{"a":\r\n--x--', type: 'multipart/form-data; boundary=x' },
  { label: 'json with a charset', body: DELIVERY, type: 'application/json; charset=latin1' },
  // Fastify refuses a Content-Type it cannot parse before any route's parser: 415 at every route.
  { label: 'a content type of garbage', body: DELIVERY, type: ';;;=', refused: 415 },
  { label: 'no content type', body: DELIVERY, type: '' },
];

/** Signature and event headers, each sent with the delivery body. */
const wrongKeyHex = hmac(WRONG_KEY, DELIVERY);
const now = () => String(Math.floor(Date.now() / 1000));
const HEADERS: { label: string; headers: () => Record<string, string> }[] = [
  { label: 'no headers', headers: () => ({}) },
  { label: 'x-github-event push, unsigned', headers: () => ({ 'x-github-event': 'push' }) },
  { label: 'x-hub-signature-256 sha256=zz', headers: () => ({ 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=zz' }) },
  { label: 'x-hub-signature-256 of a wrong key', headers: () => ({ 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${wrongKeyHex}` }) },
  { label: 'x-hub-signature-256 of another body', headers: () => ({ 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${hmac(hooked[0]!.secret, `${DELIVERY} `)}` }) },
  { label: 'x-hub-signature-256 without its prefix', headers: () => ({ 'x-github-event': 'push', 'x-hub-signature-256': wrongKeyHex }) },
  { label: 'x-hub-signature-256 empty', headers: () => ({ 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=' }) },
  { label: 'x-hub-signature-256 long', headers: () => ({ 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${'a'.repeat(8000)}` }) },
  { label: 'x-hub-signature-256 latin1', headers: () => ({ 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=\u00ff\u00fe' }) },
  { label: 'github ping, wrong key', headers: () => ({ 'x-github-event': 'ping', 'x-hub-signature-256': `sha256=${wrongKeyHex}` }) },
  { label: 'github pull_request, wrong key', headers: () => ({ 'x-github-event': 'pull_request', 'x-hub-signature-256': `sha256=${wrongKeyHex}` }) },
  { label: 'github event and delivery id long', headers: () => ({ 'x-github-event': 'p'.repeat(500), 'x-github-delivery': 'd'.repeat(500), 'x-hub-signature-256': `sha256=${wrongKeyHex}` }) },
  { label: 'github event latin1', headers: () => ({ 'x-github-event': 'p\u00fcsh', 'x-github-delivery': '\u00ff\u00fe' }) },
  { label: 'x-gitlab-event Push Hook, no token', headers: () => ({ 'x-gitlab-event': 'Push Hook' }) },
  { label: 'x-gitlab-token wrong', headers: () => ({ 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': WRONG_KEY }) },
  { label: 'x-gitlab-token long', headers: () => ({ 'x-gitlab-event': 'Tag Push Hook', 'x-gitlab-token': 't'.repeat(8000) }) },
  { label: 'webhook-signature garbage', headers: () => ({ 'x-gitlab-event': 'Push Hook', 'webhook-id': 'msg_1', 'webhook-timestamp': now(), 'webhook-signature': 'v1,garbage' }) },
  {
    label: 'webhook-signature of a wrong key',
    headers: () => ({ 'webhook-id': 'msg_2', 'webhook-timestamp': now(), 'webhook-signature': `v1,${createHmac('sha256', WRONG_KEY).update(`msg_2.${now()}.${DELIVERY}`).digest('base64')}` }),
  },
  { label: 'webhook-timestamp not a number', headers: () => ({ 'webhook-id': 'msg_3', 'webhook-timestamp': 'soon', 'webhook-signature': 'v1,x' }) },
  { label: 'webhook-timestamp stale', headers: () => ({ 'webhook-id': 'msg_4', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }) },
  { label: 'webhook-signature without its id', headers: () => ({ 'webhook-signature': 'v1,x v1,y' }) },
  { label: 'x-gitea-event push, unsigned', headers: () => ({ 'x-gitea-event': 'push' }) },
  { label: 'x-gitea-signature garbage', headers: () => ({ 'x-gitea-event': 'push', 'x-gitea-signature': 'garbage' }) },
  { label: 'x-gitea-signature of a wrong key', headers: () => ({ 'x-gitea-event': 'push', 'x-gitea-signature': wrongKeyHex }) },
  { label: 'x-event-key repo:push, unsigned', headers: () => ({ 'x-event-key': 'repo:push' }) },
  { label: 'x-event-key repo:push, x-hub-signature sha256=zz', headers: () => ({ 'x-event-key': 'repo:push', 'x-hub-signature': 'sha256=zz' }) },
  { label: 'x-event-key diagnostics:ping, unsigned', headers: () => ({ 'x-event-key': 'diagnostics:ping' }) },
  { label: 'stripe-signature t=1,v1=deadbeef', headers: () => ({ 'stripe-signature': 't=1,v1=deadbeef' }) },
  { label: 'stripe-signature garbage', headers: () => ({ 'stripe-signature': 'garbage' }) },
  { label: 'stripe-signature of a wrong key', headers: () => ({ 'stripe-signature': stripeSignature(WRONG_KEY, DELIVERY) }) },
  { label: 'stripe-signature of the right key, stale', headers: () => ({ 'stripe-signature': `t=1,v1=${hmac(STRIPE_WEBHOOK_SECRET, `1.${DELIVERY}`)}` }) },
  { label: 'stripe-signature long', headers: () => ({ 'stripe-signature': `t=${now()},${'v1=ab,'.repeat(1500)}` }) },
];

/** Malformed values of a query parameter (raw, as they stand in the query string). */
const QUERY_VALUES = ['%00', '%ED%A0%80', 'x'.repeat(5000), '%FF', '%', '%zz', '[]', '{"a":1}', 'a%00b', '%F0%9F%98%80', '+%20+'];
/** Malformed shapes of a query parameter (`k` is its name). */
const QUERY_SHAPES = [(k: string) => `${k}=a&${k}=b`, (k: string) => `${k}[]=a&${k}[]=b`, (k: string) => `${k}[0]=a`, (k: string) => `${k}[a][b]=c`, (k: string) => k, (k: string) => `${k}=`];

/** A signed-in admin's API key for the routes that authenticate, or none. */
const CALLERS: [string, Record<string, string>][] = [
  ['no key', {}],
  ['api key', { 'x-api-key': admin.apiKey }],
];

t.test('every route outside the procedures answers malformed, oversized, truncated and unsigned input with a 4xx: no 5xx, nothing deployed, no record beyond the delivery log', async t => {
  // The procedure routes: /api/<namespace>.<name> of the document's operations, and the tRPC form.
  const doc = ok('settings.getOpenApiDocument', await c.get('settings.getOpenApiDocument'));
  const procedures = new Set(
    Object.keys(doc.paths)
      .filter(p => /^\/[^/]+\.[^/]+$/.test(p))
      .map(p => `/api${p}`),
  );
  t.ok(procedures.size > 100, `${procedures.size} procedure paths in the document`);
  const raw = server.kernel.routes.filter(r => !procedures.has(r.url) && !r.url.startsWith('/api/trpc/'));
  const keys = raw.map(r => `${r.method} ${r.url}`);
  for (const expected of [
    'POST /api/deploy/:refreshToken',
    'POST /api/deploy/:hookPath/:refreshToken',
    'POST /api/deploy/github',
    'POST /api/stripe/webhook',
    'GET /api/providers/github/setup',
    'GET /api/providers/gitlab/callback',
    'GET /api/providers/gitea/authorize',
    'GET /api/providers/gitea/callback',
    'GET /api/deployment.logs/stream',
    'GET /metrics',
    'GET /health',
  ]) {
    t.ok(keys.includes(expected), `${expected} is among the raw routes`);
  }
  const params = [...new Set(raw.flatMap(r => r.url.split('/').filter(s => s === '*' || s.startsWith(':'))))].map(s => s.replace(/^:/, ''));
  t.same(
    params.filter(p => !PARAM_VALUES[p]),
    [],
    'every path parameter of a raw route has values to walk',
  );

  // The GET routes' real query: states the server issued, records that exist.
  const BASE_QUERIES: Record<string, Record<string, string>[]> = {
    '/api/providers/github/setup': [
      { state: initState, code: 'no-such-manifest-code', installation_id: String(INSTALLATION_ID) },
      { state: installState, installation_id: String(INSTALLATION_ID) },
    ],
    '/api/providers/gitlab/callback': [{ code: 'no-such-code', gitlabId, state: gitlabState }],
    '/api/providers/gitea/authorize': [{ giteaId }],
    '/api/providers/gitea/callback': [{ code: 'no-such-code', state: giteaState }],
    '/api/deployment.logs/stream': [{ deploymentId: queued[0]! }],
    '/scim/v2/Users': [{ filter: 'userName eq "admin@example.com"', startIndex: '1', count: '10' }],
    '/scim/v2/Groups': [{ filter: 'displayName eq "admin"', excludedAttributes: 'members' }],
  };
  t.same(
    Object.keys(BASE_QUERIES).filter(url => !raw.some(r => r.url === url)),
    [],
    'every route given a real query is a raw route',
  );

  const requests: Request[] = [];
  for (const route of raw) {
    const name = `${route.method} ${route.url}`;
    const paths = pathsOf(route.url);
    if (route.method === 'GET' || route.method === 'HEAD') {
      for (const { path, focus } of paths) {
        const bases = BASE_QUERIES[route.url];
        // SCIM's routes get its token too.
        for (const [caller, auth] of [...CALLERS, ...(route.url.startsWith('/scim/') ? [['scim token', scimAuth(route.url)] as const] : [])]) {
          const get = (label: string, query: string) => requests.push({ route: name, label: `${caller} ${label}`, method: route.method, path: `${path}${query ? `?${query}` : ''}`, headers: auth });
          get('plain', '');
          if (!focus) continue;
          // A route that reads no query (the document's, /health, /metrics) gets every malformed part in one
          // request: its query goes through Fastify's parser and no further (and /swagger/yaml takes a second a request).
          if (!bases) get('every malformed part', [...QUERY_VALUES.map((v, i) => `k${i}=${v}`), ...QUERY_SHAPES.map(shape => shape('s')), '%'].join('&'));
          for (const base of bases ?? []) {
            const rest = (skip: string) =>
              Object.entries(base)
                .filter(([k]) => k !== skip)
                .map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
            for (const key of [...Object.keys(base), 'x']) {
              for (const value of QUERY_VALUES) get(`${key}=${value.slice(0, 16)}`, [...rest(key), `${key}=${value}`].join('&'));
              for (const shape of QUERY_SHAPES) get(shape(key).slice(0, 24), [...rest(key), shape(key)].join('&'));
            }
            for (const whole of ['%00', '&&&', '=x', '%', Array.from({ length: 2000 }, (_, i) => `k${i}=v`).join('&')]) get(`?${whole.slice(0, 12)}`, whole);
          }
        }
      }
      continue;
    }
    // A workload's token at another kind's hook is a 404 like the unknown token: one plain delivery is enough there.
    const misplaced = (path: string) => hooked.some(w => path.endsWith(`/${w.refreshToken}`) && path !== w.path);
    for (const { path, focus: all } of paths) {
      const focus = all && !misplaced(path);
      const wrongSigned = { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${wrongKeyHex}`, 'stripe-signature': stripeSignature(WRONG_KEY, DELIVERY), ...scimAuth(route.url) };
      requests.push({ route: name, label: 'the delivery, a wrong key', method: route.method, path, headers: { 'content-type': 'application/json', ...wrongSigned }, body: DELIVERY });
      if (!focus) continue;
      for (const b of BODIES) {
        // Signed with the wrong key every way a route reads a signature; a GitHub push unless the body is another provider's.
        const headers: Record<string, string> = {
          ...(b.headers ?? { 'x-github-event': 'push' }),
          'x-hub-signature-256': `sha256=${hmac(WRONG_KEY, b.body)}`,
          'x-hub-signature': `sha256=${hmac(WRONG_KEY, b.body)}`,
          'stripe-signature': stripeSignature(WRONG_KEY, b.body.toString()),
          'x-github-delivery': randomBytes(8).toString('hex'),
          ...scimAuth(route.url),
        };
        if (b.type !== '') headers['content-type'] = b.type ?? 'application/json';
        requests.push({ route: name, label: b.label, method: route.method, path, headers, body: b.body, ...(b.refused ? { refused: b.refused } : {}) });
      }
      for (const h of HEADERS)
        requests.push({ route: name, label: h.label, method: route.method, path, headers: { 'content-type': 'application/json', ...scimAuth(route.url), ...h.headers() }, body: DELIVERY });
      // Over every route's limit (the hooks take 5 MB, the Stripe webhook 1 MB), declared and chunked; and truncated.
      requests.push({ route: name, label: 'oversize', method: route.method, path, headers: { 'content-type': 'application/json', ...wrongSigned }, body: HUGE });
      requests.push({
        route: name,
        label: 'oversize, chunked',
        method: route.method,
        path,
        headers: { 'content-type': 'application/json', ...wrongSigned },
        body: () =>
          new ReadableStream({
            start(controller) {
              for (let i = 0; i < 6; i++) controller.enqueue(new Uint8Array(1024 * 1024).fill(97));
              controller.close();
            },
          }),
      });
      requests.push({ route: name, label: 'truncated', method: route.method, path, headers: { 'content-type': 'application/json', ...wrongSigned }, body: DELIVERY.slice(0, 40), truncated: true });
    }
  }
  const walked = new Set(requests.map(r => r.route));
  t.same(
    keys.filter(k => !walked.has(k)),
    [],
    'every raw route is walked',
  );
  const focusPaths = new Set(requests.filter(r => r.label === 'empty').map(r => r.path));
  t.same(
    hooked.filter(w => !focusPaths.has(w.path)).map(w => w.kind),
    [],
    "every pushing kind's workload hook gets every body and header",
  );

  const db = new pg.Client(server.database);
  await db.connect();
  t.teardown(() => db.end());
  const counts = async () => {
    const tables = await db.query<{ name: string }>(
      "select quote_ident(table_schema) || '.' || quote_ident(table_name) as name from information_schema.tables where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') order by 1",
    );
    const out: Record<string, number> = {};
    for (const { name } of tables.rows) out[name.replace(/^public\./, '')] = Number((await db.query<{ n: string }>(`select count(*) as n from ${name}`)).rows[0]!.n);
    return out;
  };
  const before = await counts();
  t.ok(Object.keys(before).length > 20, `${Object.keys(before).length} tables counted`);
  t.same(
    Object.keys(MAY_GROW).filter(table => !(table in before)),
    [],
    'the tables allowed to grow exist',
  );

  const started = Date.now();
  const statuses = new Map<string, number>();
  const failures: string[] = [];
  const accepted: string[] = [];
  const byRoute = new Map<string, { keyless: number[]; keyed: number[] }>();
  const hookPaths = new Set(hooked.map(w => w.path));
  let logged = 0;
  await inPool(
    AT_ONCE,
    requests.map(r => async () => {
      const outcome = await send(r);
      const what = `${r.route} ${r.path.slice(0, 80)} ${r.label}`;
      if ('closed' in outcome) {
        statuses.set('closed', (statuses.get('closed') ?? 0) + 1);
        if (!r.truncated || outcome.closed.startsWith('hung')) failures.push(`${what} → ${outcome.closed}`);
        return;
      }
      const { status, text } = outcome;
      statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1);
      if (status >= 500) failures.push(`${what} → ${status} ${text.slice(0, 200)}`);
      if (r.method === 'GET' || r.method === 'HEAD') {
        const seen = byRoute.get(r.route) ?? { keyless: [], keyed: [] };
        (r.headers?.['x-api-key'] || r.headers?.authorization ? seen.keyed : seen.keyless).push(status);
        byRoute.set(r.route, seen);
        return;
      }
      // Refused for its signature: at a workload's hook and at the GitHub App's, a 401 (logged at the
      // workload's); at the Stripe webhook, a 400. A body over the limit is a 413 first; a truncated
      // one a 400 (or a close); a content type the Stripe webhook takes no body in, a 415.
      const stripeRoute = r.path === '/api/stripe/webhook';
      const expected = r.refused ? [r.refused] : r.label.startsWith('oversize') ? [413] : r.truncated ? [400] : stripeRoute ? [400, 415] : [401];
      if ((hookPaths.has(r.path) || r.path === '/api/deploy/github' || stripeRoute) && !expected.includes(status)) {
        accepted.push(`${what} → ${status} ${text.slice(0, 200)}`);
      }
      if (hookPaths.has(r.path) && status === 401) logged++;
    }),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const after = await counts();

  const figures = [...statuses.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${s}×${n}`)
    .join(', ');
  t.comment(`${raw.length} raw routes walked (${keys.join(', ')}): ${requests.length} requests in ${seconds} s: ${figures}`);
  t.same(failures.sort(), [], `no 5xx, hang or dropped connection among ${requests.length} requests`);
  t.same(accepted.sort(), [], "no fuzzed delivery gets past a hook's signature check or the Stripe webhook's");
  for (const [route, seen] of byRoute) {
    if (seen.keyless.length && seen.keyless.every(s => s === 401))
      t.ok(
        seen.keyed.some(s => s !== 401),
        `${route} authenticates, and the API key (SCIM's: its token) gets past it`,
      );
  }
  t.ok(logged > 0, `${logged} refused deliveries at the workloads' hooks`);
  const grew = Object.keys(after).filter(table => after[table] !== before[table]);
  t.same(
    grew.filter(table => !MAY_GROW[table]).map(table => `${table}: ${before[table]} → ${after[table]}`),
    [],
    'no table changed its count but those allowed to (no deployment queued, no record made)',
  );
  t.equal(after.webhook_deliveries! - before.webhook_deliveries!, logged, 'the delivery log grew by exactly the deliveries refused at the workloads’ hooks');
});
