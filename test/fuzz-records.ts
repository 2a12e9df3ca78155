// Real records for the bad-input fuzz (test/bad-input.test.ts) and the cross-organization matrix:
// one recipe per id field the OpenAPI document names, so a request aimed at a record finds it and
// its bad values go on to the services and the database. Id fields whose records cannot exist yet
// are listed with why. The records' outside parts answer on loopback: forges, S3 (s3rver), a
// registry (Debian's docker-registry), a language model, Stripe (the fuzz's billing).
import { execFileSync } from 'node:child_process';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import Docker from 'dockerode';
import { addMember, makeGitRepo, runFinished, startS3TestServer, TEST_BASE_IMAGE, type Client, type Reply } from '@berth/core/testing';
import { GOOD_KEY, startLlmStandIn } from '../plugins/ai/test/llm-stand-in.ts';
import { startStripeStandIn, type StripeStandIn } from '../plugins/billing/test/stripe-stand-in.ts';
import { startLocalRegistry } from '../plugins/registry/test/local-registry.ts';
import { MANIFEST_WEBHOOK_SECRET, startFakeGithub } from '../providers/git-github/test/github-api.ts';
import { startFakeGitlab } from '../providers/git-gitlab/test/gitlab-api.ts';
import { startFakeBitbucket, type FakeBitbucket } from '../providers/git-bitbucket/test/bitbucket-api.ts';
import { startFakeGitea } from '../providers/git-gitea/test/gitea-api.ts';

/** Id fields no record can stand behind on this Berth, with why (the fuzz sends them as they come). */
export const NO_RECORD: Record<string, string> = {
  gitlabProjectId: 'a project id on the GitLab server, not a record of Berth (the fuzz sends it as it comes)',
  clientId: "the Gitea OAuth application's client id (gitea.create, gitea.update), not a record of Berth",
  adminId: "the older variant's registry.update field (the registry's admin): accepted and ignored, no record behind it",
  chatId: 'a Telegram chat id (notification.*Telegram*), not a record of Berth',
  messageThreadId: 'a Telegram forum topic id (notification.*Telegram*), not a record of Berth',
  nodeId: 'a swarm node id of an engine (swarm.*, cluster.*), not a record of Berth',
  templateId: "a template's id in the catalog (user.toggleTemplateBookmark stores it as given), not a record of Berth",
};

function certificate(): { cert: string; key: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-fuzz-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem'), '-days', '30', '-subj', '/CN=fuzz.example.com'], {
      stdio: 'ignore',
    });
    return { cert: readFileSync(path.join(dir, 'c.pem'), 'utf8'), key: readFileSync(path.join(dir, 'k.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What each database kind's create takes beside its name and environment. */
const DATABASES: Record<string, Record<string, string>> = {
  postgres: { databaseName: 'db', databaseUser: 'u', databasePassword: 'secret-password' },
  mysql: { databaseName: 'db', databaseUser: 'u', databasePassword: 'secret-password', databaseRootPassword: 'root-password' },
  mariadb: { databaseName: 'db', databaseUser: 'u', databasePassword: 'secret-password', databaseRootPassword: 'root-password' },
  mongo: { databaseUser: 'u', databasePassword: 'secret-password' },
  redis: { databasePassword: 'secret-password' },
  libsql: { databaseUser: 'u', databasePassword: 'secret-password', sqldNode: 'primary' },
};
const BUCKET = 'fuzz';
const REGISTRY_USER = 'fuzz';
const REGISTRY_PASSWORD = 'fuzz-registry-pw';
const STRIPE_KEY = 'sk_test_berth_fuzz_0123456789';
const STRIPE_WEBHOOK_SECRET = 'whsec_berth_fuzz';
/** The fuzz's Stripe plans: the tier goodValue picks first (legacy), and hobby (the first tier stripe.upgradeSubscription takes). */
const LEGACY = { productId: 'prod_fuzz_legacy', monthlyPriceId: 'price_fuzz_m', annualPriceId: 'price_fuzz_y' };
const HOBBY = { productId: 'prod_fuzz_hobby', monthlyPriceId: 'price_fuzz_hobby_m', annualPriceId: 'price_fuzz_hobby_y' };

/**
 * The stand-ins whose address the server's config must know before it boots (the Bitbucket
 * provider's apiUrl and webUrl; with `billing`, Stripe's, which turns billing on): start them, then
 * the server with `config`.
 */
export async function fuzzStandIns(t: Test, o: { billing?: boolean } = {}) {
  const bitbucket = await startFakeBitbucket(t);
  const providers = { git: { bitbucket: { options: { apiUrl: bitbucket.apiUrl, webUrl: bitbucket.webUrl } } } };
  if (!o.billing) return { bitbucket, config: { providers } };
  const stripe = await startStripeStandIn(STRIPE_KEY, {
    products: [
      { id: LEGACY.productId, name: 'Legacy', default_price: LEGACY.monthlyPriceId },
      { id: HOBBY.productId, name: 'Hobby', default_price: HOBBY.monthlyPriceId },
    ],
    prices: [
      { id: LEGACY.monthlyPriceId, product: LEGACY.productId, unit_amount: 400, recurring: { interval: 'month' } },
      { id: LEGACY.annualPriceId, product: LEGACY.productId, unit_amount: 4000, recurring: { interval: 'year' } },
      { id: HOBBY.monthlyPriceId, product: HOBBY.productId, unit_amount: 450, recurring: { interval: 'month' } },
      { id: HOBBY.annualPriceId, product: HOBBY.productId, unit_amount: 4500, recurring: { interval: 'year' } },
    ],
  });
  t.teardown(() => stripe.close());
  return { bitbucket, stripe, config: { providers, stripeSecretKey: STRIPE_KEY, stripeWebhookSecret: STRIPE_WEBHOOK_SECRET, stripeApiUrl: stripe.url, stripePlans: { legacy: LEGACY, hobby: HOBBY } } };
}

/**
 * Buys `servers` servers for the caller's organization as a customer does: a Checkout session,
 * completed and paid on the Stripe stand-in, each step told to Berth by Stripe's signed webhook
 * (billing on, server.create is refused past what is paid for).
 */
export async function buyServers(server: { url: string }, c: Client, stripe: StripeStandIn, servers: number): Promise<void> {
  const ok = (what: string, r: Reply) => {
    if (r.status !== 200) throw new Error(`fuzz billing ${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
  const { sessionId } = ok('checkout', await c.post('billing.createCheckoutSession', { tier: 'legacy', productId: LEGACY.productId, serverQuantity: servers, isAnnual: false }));
  const webhook = async (type: string, object: Record<string, unknown>) => {
    const payload = JSON.stringify(stripe.event(type, object));
    const at = Math.floor(Date.now() / 1000);
    const signature = `t=${at},v1=${createHmac('sha256', STRIPE_WEBHOOK_SECRET).update(`${at}.${payload}`).digest('hex')}`;
    ok(type, await c.raw('/api/stripe/webhook', { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload }));
  };
  const done = stripe.completeCheckout(sessionId);
  await webhook('checkout.session.completed', done.session);
  await webhook('invoice.paid', stripe.pay(done.invoice.id));
  if (ok('canCreateMoreServers', await c.get('billing.canCreateMoreServers')) !== true) throw new Error('fuzz billing: the paid invoice granted no server');
}

/**
 * Makes records (as `c`, in its organization): `ids` holds one of each kind for the whole run, `fresh(field)` a new one (for
 * operations that remove what they are given).
 */
export async function fuzzRecords(
  t: Test,
  server: { url: string },
  c: Client,
  admin: { userId: string; organizationId: string },
  o: { portBase?: number; bitbucket: FakeBitbucket; stripe?: StripeStandIn },
) {
  // Published ports are the host's: a second organization's records take another range.
  const portBase = o.portBase ?? 20000;
  let n = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++n}`;
  const ok = (what: string, r: Reply) => {
    if (r.status !== 200) throw new Error(`fuzz record ${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
  const project = ok('project.create', await c.post('project.create', { name: unique('fuzz') }));
  const environmentId = project.environment.environmentId as string;
  const ids: Record<string, string> = { id: admin.userId, organizationId: admin.organizationId, projectId: project.project.projectId, environmentId };
  const { cert, key } = certificate();

  // Notification channels of every kind (nothing is sent: no event, and the test operations' bodies are the fuzz's own).
  const nowhere = 'http://127.0.0.1:9/fuzz';
  const channelSettings: Record<string, [string, Record<string, unknown>]> = {
    slack: ['Slack', { webhookUrl: nowhere, channel: '#fuzz' }],
    discord: ['Discord', { webhookUrl: nowhere }],
    telegram: ['Telegram', { botToken: '1:fuzz', chatId: '1' }],
    email: ['Email', { smtpServer: '127.0.0.1', smtpPort: 9, username: 'u', password: 'p', fromAddress: 'fuzz@example.com', toAddresses: ['fuzz@example.com'] }],
    resend: ['Resend', { apiKey: 're_fuzz', fromAddress: 'fuzz@example.com', toAddresses: ['fuzz@example.com'] }],
    gotify: ['Gotify', { serverUrl: nowhere, appToken: 't', priority: 5 }],
    ntfy: ['Ntfy', { serverUrl: nowhere, topic: 'fuzz', priority: 3 }],
    mattermost: ['Mattermost', { webhookUrl: nowhere }],
    custom: ['Custom', { endpoint: nowhere }],
    lark: ['Lark', { webhookUrl: nowhere }],
    teams: ['Teams', { webhookUrl: nowhere }],
    pushover: ['Pushover', { userKey: 'u', apiToken: 't', priority: 0 }],
  };
  let lastSlack: Record<string, any> | null = null;
  const channel = async (kind: string) => {
    const [suffix, settings] = channelSettings[kind]!;
    return ok(
      `notification.create${suffix}`,
      await c.post(`notification.create${suffix}`, { name: unique('fuzz'), appBuildError: false, databaseBackup: false, dokployRestart: false, appDeploy: false, dockerCleanup: false, ...settings }),
    );
  };

  // GitHub connections, made as a user makes one: the manifest flow against GitHub on loopback.
  const appKey = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
  const github = await startFakeGithub(t, { publicKeyPem: appKey.publicKey, privateKeyPem: appKey.privateKey, appId: '4242', installationId: 77 });
  let lastGithub: { githubId: string; gitProviderId: string } | null = null;
  const githubConnection = async () => {
    const { state } = ok('github.setupState', await c.post('github.setupState', { githubUrl: github.url }));
    const made = await fetch(`${server.url}/api/providers/github/setup?${new URLSearchParams({ code: github.manifestCode(), state, installation_id: String(github.installationId) })}`, {
      headers: c.apiKey ? { 'x-api-key': c.apiKey } : { authorization: `Bearer ${c.token}` },
      redirect: 'manual',
    });
    const githubId = made.status === 307 ? new URL(made.headers.get('location')!, server.url).searchParams.get('githubId') : null;
    if (!githubId) throw new Error(`fuzz record github setup: ${made.status} ${await made.text()}`);
    lastGithub = { githubId, gitProviderId: ok('github.one', await c.get('github.one', { githubId })).gitProviderId };
    return lastGithub;
  };

  // GitLab connections against GitLab on loopback, with a token pair it issued (the older variant's create carries them).
  const gitlab = await startFakeGitlab(t);
  const gitlabConnection = async () => {
    const pair = gitlab.issue(3600);
    return ok(
      'gitlab.create',
      await c.post('gitlab.create', {
        authId: admin.userId,
        name: unique('gitlab'),
        gitlabUrl: gitlab.url,
        applicationId: gitlab.app.clientId,
        secret: gitlab.app.secret,
        redirectUri: gitlab.app.redirectUri,
        accessToken: pair.accessToken,
        refreshToken: pair.refreshToken,
        expiresAt: pair.expiresAt,
      }),
    ).gitlabId as string;
  };

  // Bitbucket connections against Bitbucket on loopback (the server's provider options point there), with its API token.
  const bitbucketConnection = async () =>
    ok(
      'bitbucket.create',
      await c.post('bitbucket.create', {
        authId: admin.userId,
        name: unique('bitbucket'),
        bitbucketUsername: o.bitbucket.user.username,
        bitbucketEmail: o.bitbucket.user.email,
        apiToken: o.bitbucket.user.apiToken,
        bitbucketWorkspaceName: 'fuzz',
      }),
    ).bitbucketId as string;

  // Gitea connections against Gitea on loopback, with a token pair it issued and its OAuth application.
  const gitea = await startFakeGitea(t);
  // A repository its connections list and clone.
  const repo = await makeGitRepo({ 'docker-compose.yml': 'services:\n  web:\n    image: berth-test/busybox:1\n' });
  t.teardown(repo.cleanup);
  await gitea.addGitRepo('fuzz', 'shop', repo.dir, { main: repo.commit });
  const giteaConnection = async () => {
    const pair = gitea.issue(3600);
    return ok(
      'gitea.create',
      await c.post('gitea.create', {
        name: unique('gitea'),
        giteaUrl: gitea.url,
        clientId: gitea.app.clientId,
        clientSecret: gitea.app.clientSecret,
        redirectUri: gitea.app.redirectUri,
        accessToken: pair.accessToken,
        refreshToken: pair.refreshToken,
        expiresAt: pair.expiresAt,
      }),
    ).giteaId as string;
  };

  // S3 (s3rver) for the destinations, a registry, a language model: each on loopback.
  const s3 = await startS3TestServer(t, [BUCKET]);
  const bucket = { endpoint: s3.endpoint, region: s3.region, bucket: BUCKET, accessKey: s3.accessKey, secretAccessKey: s3.secretAccessKey };
  const registry = await startLocalRegistry({ [REGISTRY_USER]: REGISTRY_PASSWORD });
  t.teardown(() => registry.stop());
  const llm = await startLlmStandIn('berth-test/busybox:1');
  t.teardown(() => llm.close());

  const database = async (kind: string, serverId: string | null) => {
    const name = unique(kind);
    const created = ok(`${kind}.create`, await c.post(`${kind}.create`, { name, ...DATABASES[kind], environmentId, ...(serverId ? { serverId } : {}) }));
    if (created !== true) return created[`${kind}Id`] as string;
    // libsql.create answers true, as the peer's: the record is found by its name in its environment.
    const listed = ok('environment.one', await c.get('environment.one', { environmentId }))[kind] as Record<string, string>[];
    return listed.find(d => d.name === name)![`${kind}Id`]!;
  };

  const recipes: Record<string, () => Promise<string>> = {
    giteaId: giteaConnection,
    gitlabId: gitlabConnection,
    bitbucketId: bitbucketConnection,
    // gitlab.create's authId (the peer's): the caller's own user id; Berth makes the caller the owner whatever it names.
    authId: async () => admin.userId,
    // github.update takes both ids: githubId is that of the fuzz's gitProviderId (made just before it).
    gitProviderId: async () => (await githubConnection()).gitProviderId,
    githubId: async () => {
      const made = lastGithub ?? (await githubConnection());
      lastGithub = null;
      return made.githubId;
    },
    notificationId: async () => {
      const made = await channel('slack');
      lastSlack = made;
      return made.notificationId;
    },
    // update<Kind> takes the channel's own record id beside notificationId: slackId is that of the
    // fuzz's notificationId (a slack channel); the other kinds' answer 400 naming the field.
    ...Object.fromEntries(Object.keys(channelSettings).map(kind => [`${kind}Id`, async () => (kind === 'slack' && lastSlack ? lastSlack : await channel(kind))[`${kind}Id`] as string])),
    projectId: async () => ok('project.create', await c.post('project.create', { name: unique('fuzz') })).project.projectId,
    environmentId: async () => ok('environment.create', await c.post('environment.create', { projectId: ids.projectId, name: unique('env') })).environmentId,
    organizationId: async () => ok('organization.create', await c.post('organization.create', { name: unique('org') })).id,
    userId: async () => (await addMember(server, c, `${unique('member')}@example.com`)).userId,
    memberId: async () => (await addMember(server, c, `${unique('member')}@example.com`)).membershipId,
    invitationId: async () => {
      const r = ok('organization.inviteMember', await c.post('organization.inviteMember', { email: `${unique('invited')}@example.com`, role: 'member' }));
      return r.invitationId ?? r.id;
    },
    // An AI configuration of the language model on loopback (test servers list loopback in outboundAllow).
    aiId: async () => ok('ai.create', await c.post('ai.create', { name: unique('ai'), apiUrl: `${llm.url}/v1`, apiKey: GOOD_KEY, model: 'gpt-test', isEnabled: true })).aiId,
    apiKeyId: async () => ok('user.createApiKey', await c.post('user.createApiKey', { name: unique('key'), metadata: { organizationId: admin.organizationId } })).id,
    // Servers without a key: nothing connects to them (the probe passes them by).
    serverId: async () => ok('server.create', await c.post('server.create', { name: unique('srv'), ipAddress: '192.0.2.10', port: 22, sshKeyId: null })).serverId,
    // The swarm a server joins (cluster.joinServer): another server without a key, so nothing joins.
    managerServerId: async () => ok('server.create', await c.post('server.create', { name: unique('manager'), ipAddress: '192.0.2.12', port: 22, sshKeyId: null })).serverId,
    buildServerId: async () => ok('server.create', await c.post('server.create', { name: unique('build'), ipAddress: '192.0.2.11', port: 22, sshKeyId: null, serverType: 'build' })).serverId,
    // A registry on loopback (the engine trusts one there without TLS), its password checked.
    registryId: async () =>
      ok(
        'registry.create',
        await c.post('registry.create', { registryName: unique('reg'), username: REGISTRY_USER, password: REGISTRY_PASSWORD, registryUrl: registry.url, registryType: 'cloud', imagePrefix: null }),
      ).registryId,
    tagId: async () => ok('tag.create', await c.post('tag.create', { name: unique('tag'), color: '#0ea5e9' })).tagId,
    // A custom role of the organization (customRole.*: named, not numbered).
    roleName: async () => ok('customRole.create', await c.post('customRole.create', { roleName: unique('role'), permissions: { service: ['read'] } })).role,
    // A SCIM provider of the organization (its name: lowercase, digits and dashes, as unique makes them),
    // and an SSO provider (sso.*, a SAML one: nothing to reach) of the same id.
    providerId: async () => {
      const providerId = ok('scim.generateToken', await c.post('scim.generateToken', { providerId: unique('idp') })).providerId as string;
      const samlConfig = { entryPoint: 'https://example.com/sso', cert, callbackUrl: 'https://example.com/acs', spMetadata: {} };
      // the issuer goodValue gives a URL (sso.update's base keeps it: a new issuer must be a trusted origin first)
      ok('sso.register', await c.post('sso.register', { providerId, issuer: 'https://example.com/x', domains: [`${providerId}.example.com`], samlConfig }));
      return providerId;
    },
    sshKeyId: async () =>
      ok(
        'sshKey.generate+create',
        await c.post('sshKey.create', { name: unique('key'), ...ok('sshKey.generate', await c.post('sshKey.generate', { type: 'ed25519' })), organizationId: admin.organizationId }),
      ).sshKeyId,
    applicationId: async () => ok('application.create', await c.post('application.create', { name: unique('app'), environmentId })).applicationId,
    // A preview made as a forge makes one: a pull_request delivery, signed with the application's webhook secret (an
    // unsigned one makes none), to the hook of an application with previews on, deploying from a plain git URL (a
    // closed loopback port: its deploy fails at once).
    previewDeploymentId: async () => {
      const app = ok('application.create', await c.post('application.create', { name: unique('app'), environmentId }));
      const secret = `fuzz-secret-${unique('s')}`;
      ok(
        'application.update',
        await c.post('application.update', {
          applicationId: app.applicationId,
          sourceType: 'git',
          customGitUrl: 'http://127.0.0.1:9/fuzz.git',
          customGitBranch: 'main',
          webhookSecret: secret,
          isPreviewDeploymentsActive: true,
          previewLimit: 100,
        }),
      );
      const number = ++n;
      const body = JSON.stringify({ action: 'opened', number, pull_request: { id: number, number, html_url: '', title: 'fuzz', head: { ref: 'fuzz', sha: null }, base: { ref: 'main' } } });
      const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      await fetch(`${server.url}/api/deploy/${app.refreshToken}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-hub-signature-256': signature },
        body,
      });
      return ok('previewDeployment.all', await c.get('previewDeployment.all', { applicationId: app.applicationId }))[0].previewDeploymentId;
    },
    composeId: async () =>
      ok('compose.create', await c.post('compose.create', { name: unique('stack'), environmentId, composeFile: 'services:\n  web:\n    image: berth-test/busybox:1\n' })).composeId,
    ...Object.fromEntries(Object.keys(DATABASES).map(kind => [`${kind}Id`, () => database(kind, null)])),
    destinationId: async () => ok('destination.create', await c.post('destination.create', { name: unique('s3'), provider: 'Minio', ...bucket, additionalFlags: [] })).destinationId,
    backupId: async () =>
      ok(
        'backup.create',
        await c.post('backup.create', {
          schedule: '0 3 * * *',
          enabled: false,
          prefix: unique('b'),
          destinationId: ids.destinationId,
          database: 'db',
          databaseType: 'postgres',
          postgresId: ids.postgresId,
        }),
      ).backupId,
    volumeBackupId: async () =>
      ok(
        'volumeBackups.create',
        await c.post('volumeBackups.create', {
          name: unique('vb'),
          volumeName: 'fuzz-volume',
          prefix: 'v',
          serviceType: 'redis',
          cronExpression: '0 3 * * *',
          enabled: false,
          destinationId: ids.destinationId,
          redisId: ids.redisId,
        }),
      ).volumeBackupId,
    domainId: async () => ok('domain.create', await c.post('domain.create', { host: `${unique('d')}.example.com`, applicationId: ids.applicationId, port: 80 })).domainId,
    redirectId: async () => {
      const regex = `^https?://${unique('r')}/(.*)`;
      ok('redirects.create', await c.post('redirects.create', { applicationId: ids.applicationId, regex, replacement: 'https://example.com/$1', permanent: false }));
      return ok('application.one', await c.get('application.one', { applicationId: ids.applicationId })).redirects.find((r: { regex: string }) => r.regex === regex).redirectId;
    },
    securityId: async () => {
      const username = unique('u');
      ok('security.create', await c.post('security.create', { applicationId: ids.applicationId, username, password: 'a password' }));
      return ok('application.one', await c.get('application.one', { applicationId: ids.applicationId })).security.find((s: { username: string }) => s.username === username).securityId;
    },
    certificateId: async () => ok('certificates.create', await c.post('certificates.create', { name: unique('cert'), certificateData: cert, privateKey: key })).certificateId,
    // A container on this machine's engine, labelled as Berth's for the organization (docker.*): its short id, as docker.getContainers answers it.
    containerId: async () => {
      const box = await new Docker().createContainer({
        name: unique('fuzz-box'),
        Image: TEST_BASE_IMAGE,
        Cmd: ['sleep', '3600'],
        Labels: { 'berth.organization': admin.organizationId },
        HostConfig: { Init: true },
      });
      t.teardown(() => box.remove({ force: true }).catch(() => undefined));
      await box.start();
      return box.id.slice(0, 12);
    },
    // A bridge network on this machine's engine, labelled with the organization (removed when the test server's organizations go).
    networkId: async () => ok('network.create', await c.post('network.create', { name: unique('fuzz-net') })).networkId,
    portId: async () => ok('port.create', await c.post('port.create', { applicationId: ids.applicationId, publishedPort: portBase + n, targetPort: 80, protocol: 'tcp' })).portId,
    mountId: async () =>
      ok('mounts.create', await c.post('mounts.create', { type: 'volume', volumeName: unique('vol'), mountPath: `/data/${n}`, serviceId: ids.applicationId, serviceType: 'application' })).mountId,
    // An application with nothing to deploy: its deployment is queued and fails at once, on the record (awaited: a queued one cannot be removed).
    deploymentId: async () => (await runFinished(c, 'application.deploy', { applicationId: await recipes.applicationId!() })).deploymentId,
    // A release kept to roll back to: an application of a local image deployed for real (its service removed when the test ends:
    // a test server's teardown leaves the shared engine's services alone).
    rollbackId: async () => {
      const app = ok('application.create', await c.post('application.create', { name: unique('app'), environmentId }));
      t.teardown(async () => {
        const engine = new Docker();
        await engine
          .getService(app.appName)
          .remove()
          .catch(() => undefined);
        // Its releases' rollback tags too.
        for (const image of await engine.listImages({ filters: JSON.stringify({ reference: [`berth/${app.appName}`] }) }))
          for (const tag of image.RepoTags ?? [])
            await engine
              .getImage(tag)
              .remove()
              .catch(() => undefined);
      });
      ok(
        'application.update',
        await c.post('application.update', { applicationId: app.applicationId, sourceType: 'docker', dockerImage: TEST_BASE_IMAGE, command: 'sleep 3600', stopGracePeriodSwarm: 1_000_000_000 }),
      );
      const deployed = await runFinished(c, 'application.deploy', { applicationId: app.applicationId });
      if (deployed.state !== 'done') throw new Error(`the fuzz's release did not deploy: ${deployed.errorMessage}`);
      const [release] = ok('deployment.allByType', await c.get('deployment.allByType', { id: app.applicationId, type: 'application' })).filter((d: { rollback: unknown }) => d.rollback);
      return release.rollback.rollbackId;
    },
    // A schedule of the run's application, off (its runs are runManually's: the application is never deployed, so each fails at once).
    // A patch of the run's application: one file of its repository (it has none, and is never deployed: nothing applies it).
    patchId: async () => ok('patch.create', await c.post('patch.create', { filePath: `${unique('fuzz')}.txt`, content: 'patched', applicationId: ids.applicationId })).patchId,
    scheduleId: async () =>
      ok(
        'schedule.create',
        await c.post('schedule.create', {
          name: unique('sched'),
          cronExpression: '0 3 * * *',
          command: 'true',
          shellType: 'sh',
          scheduleType: 'application',
          applicationId: ids.applicationId,
          enabled: false,
        }),
      ).scheduleId,
  };
  // Fields that name a record of another field's kind.
  const same: Record<string, string> = {
    sourceEnvironmentId: 'environmentId',
    targetEnvironmentId: 'environmentId',
    customGitSSHKeyId: 'sshKeyId',
    rollbackRegistryId: 'registryId',
    buildRegistryId: 'registryId',
    databaseId: 'postgresId',
    serviceId: 'applicationId',
  };
  for (const field of ['applicationId', 'composeId', 'postgresId', 'mysqlId', 'mariadbId', 'mongoId', 'redisId', 'destinationId', 'sshKeyId']) ids[field] = await recipes[field]!();
  for (const field of Object.keys(recipes)) ids[field] ??= await recipes[field]!();
  for (const [field, like] of Object.entries(same)) ids[field] = ids[like]!;
  // Stripe's product: the plan's, not a record of Berth's (billing on only).
  if (o.stripe) ids.productId = LEGACY.productId;

  // Workloads on a server without a key (servers do not connect without one): their deployments fail before any engine is reached.
  const onServer = new Map<string, Promise<string>>();
  const workloadOnServer: Record<string, () => Promise<string>> = {
    applicationId: async () => ok('application.create', await c.post('application.create', { name: unique('app'), environmentId, serverId: ids.serverId })).applicationId,
    composeId: async () =>
      ok('compose.create', await c.post('compose.create', { name: unique('stack'), environmentId, serverId: ids.serverId, composeFile: 'services:\n  web:\n    image: berth-test/busybox:1\n' }))
        .composeId,
    ...Object.fromEntries(Object.keys(DATABASES).map(kind => [`${kind}Id`, () => database(kind, ids.serverId!)])),
  };

  return {
    ids,
    /** A workload of the field's kind (applicationId, composeId, postgresId...) made once on a server without a key: nothing it deploys reaches an engine. */
    onServer: (field: string) => {
      if (!onServer.has(field)) onServer.set(field, workloadOnServer[field]!());
      return onServer.get(field)!;
    },
    /** Plain values of the stand-ins' by field name, for goodValue beside the ids (a destination's S3 location). */
    values: bucket as Record<string, string>,
    /** The stand-ins the records use. */
    registry: { url: registry.url, username: REGISTRY_USER, password: REGISTRY_PASSWORD },
    llm: { url: `${llm.url}/v1`, apiKey: GOOD_KEY, model: 'gpt-test' },
    github: { appId: github.appId, webhookSecret: MANIFEST_WEBHOOK_SECRET },
    gitea: { url: gitea.url, owner: 'fuzz', repositoryName: 'shop' },
    /** A new notification channel of the kind (slack, email...): its notificationId and <kind>Id. */
    channel: (kind: string) => channel(kind) as Promise<Record<string, string>>,
    cert,
    key,
    /** Whether the fuzz can make a record for this field. */
    has: (field: string) => field in recipes || field in same,
    /** A new record for the field (a removing operation takes it away). */
    fresh: async (field: string) => (recipes[field] ?? recipes[same[field]!]!)(),
  };
}
