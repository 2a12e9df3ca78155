// The peer's user.* reads of one's own account, over HTTP on real PostgreSQL, on both wire forms:
// user.session, user.checkUserOrganizations, user.getServerMetrics, the template bookmarks and
// user.getBackups (the organization's web-server backups, with a real run to S3-compatible storage).
import t from 'tap';
import { startTestServer, signUpAdmin, addMember, otherOrganization, startS3TestServer, waitFor, Client } from '@berth/core/testing';

t.setTimeout(240_000);
const PASSPHRASE = 'the operator keeps this one 42';
const BUCKET = 'berth-own';

t.test("user.* of one's own account", async t => {
  const s3 = await startS3TestServer(t, [BUCKET]);
  const server = await startTestServer({ backupPassphrase: PASSPHRASE });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com');
  const member = await addMember(server, admin.client, 'member@example.com');
  const deputy = await addMember(server, admin.client, 'deputy@example.com', 'admin');
  const anon = new Client(server.url);
  // The same owner acting in a second organization of its own, and an admin of a stranger's.
  const other = await otherOrganization(server, admin.userId);
  const stranger = await addMember(server, other.client, 'stranger@example.com', 'admin');

  t.test("user.session: the caller's user and active organization, null without credentials", async t => {
    const mine = await admin.client.get('user.session');
    t.equal(mine.status, 200);
    t.same(mine.body, { user: { id: admin.userId }, session: { activeOrganizationId: admin.organizationId } });
    t.same((await admin.client.trpc('query', 'user.session')).body, { result: { data: { json: mine.body } } }, 'the same on tRPC');
    t.same((await anon.get('user.session', {}, { token: admin.token })).body, mine.body, 'the same with the bearer token');
    t.same(
      (await other.client.get('user.session')).body,
      { user: { id: admin.userId }, session: { activeOrganizationId: other.organizationId } },
      "a key acting in the other organization: that one's",
    );
    t.same((await member.client.get('user.session')).body, { user: { id: member.userId }, session: { activeOrganizationId: admin.organizationId } });
    const none = await anon.get('user.session');
    t.equal(none.status, 200, 'public');
    t.equal(none.body, null, 'null without credentials');
    t.same((await anon.trpc('query', 'user.session')).body, { result: { data: { json: null } } }, 'null on tRPC too');
    t.equal((await anon.get('user.session', {}, { token: 'not-a-token' })).body, null, 'and with a credential that is no longer good');
  });

  t.test('user.checkUserOrganizations: how many organizations a user belongs to', async t => {
    t.equal((await admin.client.get('user.checkUserOrganizations', { userId: admin.userId })).body, 2, 'the owner is in its two');
    t.equal((await member.client.get('user.checkUserOrganizations', { userId: member.userId })).body, 1, "a member's own count");
    t.same((await admin.client.trpc('query', 'user.checkUserOrganizations', { userId: member.userId })).body, { result: { data: { json: 1 } } }, "an owner asks of a member's (tRPC)");
    t.equal((await deputy.client.get('user.checkUserOrganizations', { userId: admin.userId })).body, 2, 'so does an admin');
    const asMember = await member.client.get('user.checkUserOrganizations', { userId: admin.userId });
    t.equal(asMember.status, 403, "a member may not ask of someone else's");
    t.match(asMember.body, { code: 'FORBIDDEN', message: /Only admins and owners/ });
    const outside = await admin.client.get('user.checkUserOrganizations', { userId: stranger.userId });
    t.equal(outside.status, 404, "another organization's user is not found");
    t.notOk(JSON.stringify(outside.body).includes(stranger.userId));
    t.equal((await stranger.client.get('user.checkUserOrganizations', { userId: member.userId })).status, 404, 'nor the other way round');
    t.equal((await admin.client.get('user.checkUserOrganizations', { userId: '' })).status, 400, 'an empty id is a bad input');
    t.equal((await admin.client.get('user.checkUserOrganizations', { userId: 'x'.repeat(65) })).status, 400, 'and so is a long one');
    t.equal((await anon.get('user.checkUserOrganizations', { userId: admin.userId })).status, 401);
  });

  t.test("user.getServerMetrics: the caller's account, as the peer answers it", async t => {
    const mine = await member.client.get('user.getServerMetrics');
    t.equal(mine.status, 200);
    t.match(mine.body, { id: member.userId, email: 'member@example.com', twoFactorEnabled: false, stripeCustomerId: null, serversQuantity: 0 });
    t.notOk('passwordHash' in mine.body, 'no password hash');
    t.same(mine.body, (await member.client.get('user.one', { userId: member.userId })).body.user, 'the same account user.one answers');
    t.same((await member.client.trpc('query', 'user.getServerMetrics')).body, { result: { data: { json: mine.body } } }, 'the same on tRPC');
    t.equal((await anon.get('user.getServerMetrics')).status, 401);
  });

  t.test('template bookmarks: each user its own, in the order bookmarked', async t => {
    t.same((await admin.client.get('user.getBookmarkedTemplates')).body, [], 'none at first');
    t.same((await admin.client.post('user.toggleTemplateBookmark', { templateId: 'plausible' })).body, { isBookmarked: true });
    t.same((await admin.client.trpc('mutation', 'user.toggleTemplateBookmark', { templateId: 'ghost' })).body, { result: { data: { json: { isBookmarked: true } } } }, 'on tRPC too');
    t.same((await admin.client.post('user.toggleTemplateBookmark', { templateId: 'n8n' })).body, { isBookmarked: true });
    t.same((await admin.client.get('user.getBookmarkedTemplates')).body, ['plausible', 'ghost', 'n8n']);
    t.same((await admin.client.post('user.toggleTemplateBookmark', { templateId: 'ghost' })).body, { isBookmarked: false }, 'toggled again: taken away');
    t.same((await admin.client.trpc('query', 'user.getBookmarkedTemplates')).body, { result: { data: { json: ['plausible', 'n8n'] } } });
    t.same((await other.client.get('user.getBookmarkedTemplates')).body, ['plausible', 'n8n'], "a user's own, whatever organization it acts in (the peer keeps them on the user)");
    t.same((await member.client.get('user.getBookmarkedTemplates')).body, [], "another member's are not the caller's");
    t.same((await stranger.client.get('user.getBookmarkedTemplates')).body, [], "nor another organization's user's");
    t.same((await member.client.post('user.toggleTemplateBookmark', { templateId: 'plausible' })).body, { isBookmarked: true }, 'a member bookmarks the same template');
    t.same((await admin.client.get('user.getBookmarkedTemplates')).body, ['plausible', 'n8n'], "which changes nothing of the owner's");
    const twice = await Promise.all([1, 2].map(() => deputy.client.post('user.toggleTemplateBookmark', { templateId: 'gitea' })));
    t.same(
      twice.map(r => r.status),
      [200, 200],
      'two toggles at once both answer',
    );
    t.ok((await deputy.client.get('user.getBookmarkedTemplates')).body.filter((id: string) => id === 'gitea').length <= 1, 'and never bookmark a template twice');
    t.equal((await admin.client.post('user.toggleTemplateBookmark', { templateId: '' })).status, 400, 'an empty template id is a bad input');
    t.equal((await admin.client.post('user.toggleTemplateBookmark', { templateId: 'x'.repeat(256) })).status, 400, 'and so is a long one');
    t.equal((await anon.post('user.toggleTemplateBookmark', { templateId: 'ghost' })).status, 401);
  });

  t.test("a removed account's bookmarks go with it", async t => {
    const leaving = await addMember(server, admin.client, 'leaving@example.com');
    t.same((await leaving.client.post('user.toggleTemplateBookmark', { templateId: 'ghost' })).body, { isBookmarked: true });
    t.equal((await admin.client.post('user.remove', { userId: leaving.userId })).status, 200);
    const [row] = await server.kernel.container.cradle.orm.em.fork().getConnection().execute<{ n: number }[]>('select count(*)::int as n from template_bookmarks where user_id = ?', [leaving.userId]);
    t.equal(row?.n, 0);
  });

  t.test("user.getBackups: the caller's account and keys with the organization's web-server backups", async t => {
    const location = { endpoint: s3.endpoint, region: s3.region, bucket: BUCKET, accessKey: s3.accessKey, secretAccessKey: s3.secretAccessKey };
    const dest = (await admin.client.post('destination.create', { name: 'own', provider: 'Minio', ...location, additionalFlags: [] })).body;
    const before = await admin.client.get('user.getBackups');
    t.equal(before.status, 200);
    t.match(before.body, { id: admin.userId, email: 'owner@example.com', backups: [] }, 'no backups yet');
    t.same(
      before.body.apiKeys.map((k: { id: string; enabled: boolean }) => [typeof k.id, k.enabled]),
      [
        ['string', true],
        ['string', true],
      ],
      "the caller's API keys (one acting in each of its organizations), as user.get lists them",
    );
    t.notOk(JSON.stringify(before.body).includes(admin.apiKey), 'never the key itself');
    const input = { schedule: '0 3 * * *', prefix: 'instance', destinationId: dest.destinationId, database: 'berth', databaseType: 'web-server', enabled: false };
    const created = await admin.client.post('backup.create', input);
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { backupId } = created.body;
    // A database's backup of the same organization is its database's, not listed here.
    const db = await admin.client.post('postgres.create', {
      name: 'shop-db',
      environmentId: (await admin.client.post('project.create', { name: 'Shop' })).body.environment.environmentId,
      databaseName: 'shop',
      databaseUser: 'shop',
      databasePassword: 'shop-password',
    });
    t.equal((await admin.client.post('backup.create', { ...input, databaseType: 'postgres', database: 'shop', postgresId: db.body.postgresId })).status, 200);
    const run = await admin.client.post('backup.manualBackupWebServer', { backupId });
    t.equal(run.status, 200, JSON.stringify(run.body));
    const listed = await waitFor('the run is listed', async () => {
      const r = await admin.client.get('user.getBackups');
      return r.body.backups[0]?.deployments?.[0]?.status === 'done' ? r : undefined;
    });
    t.match(
      listed.body.backups,
      [{ backupId, databaseType: 'web-server', prefix: 'instance', destination: { destinationId: dest.destinationId, name: 'own' }, deployments: [{ status: 'done' }] }],
      'the web-server backup with its destination and its run',
    );
    t.equal(listed.body.backups.length, 1, 'and only that one');
    t.notOk(JSON.stringify(listed.body).includes(s3.secretAccessKey), "the destination's secret is not answered");
    t.same((await admin.client.trpc('query', 'user.getBackups')).body, { result: { data: { json: listed.body } } }, 'the same on tRPC');
    t.same(
      (await deputy.client.get('user.getBackups')).body.backups.map((b: { backupId: string }) => b.backupId),
      [backupId],
      'an admin of the organization lists them with its own account',
    );
    t.equal((await member.client.get('user.getBackups')).status, 403, "a member may not (the peer's admin procedure)");
    t.same((await other.client.get('user.getBackups')).body.backups, [], "the owner's other organization has none of them");
    t.same((await stranger.client.get('user.getBackups')).body.backups, [], "nor has a stranger's organization");
    t.equal((await anon.get('user.getBackups')).status, 401);
  });
});

t.test('without the backups plugin, user.getBackups lists no backups', async t => {
  const server = await startTestServer({ plugins: ['auth', 'user', 'organization'], jobs: false });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const r = await admin.client.get('user.getBackups');
  t.equal(r.status, 200);
  t.match(r.body, { id: admin.userId, backups: [] });
});
