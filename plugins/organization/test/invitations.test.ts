// The peer's invitation procedures of user.* on Berth's organization invitations, over HTTP on real
// PostgreSQL, on both wire forms: user.getUserByToken (public: the token its link carries),
// user.getInvitations (those addressed to the caller) and user.sendInvitation, which mails the link
// through an email channel to a real SMTP server.
import t from 'tap';
import { startTestServer, signUpAdmin, addMember, otherOrganization, startSmtp, makeCertificate, Client } from '@berth/core/testing';

t.setTimeout(180_000);
const toggles = { appBuildError: false, databaseBackup: false, dokployRestart: false, appDeploy: false, dockerCleanup: false };

t.test('invitations through user.*', async t => {
  const smtp = await startSmtp(t, makeCertificate(t), 'none');
  let server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com');
  const member = await addMember(server, admin.client, 'member@example.com');
  const anon = new Client(server.url);
  // Another organization (the same owner's) and a stranger who administers it.
  const other = await otherOrganization(server, admin.userId);
  const stranger = await addMember(server, other.client, 'stranger@example.com', 'admin');
  const invite = async (c: Client, email: string, role: 'admin' | 'member' = 'member') => {
    const r = await c.post('organization.inviteMember', { email, role });
    t.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { id: string; token: string; organizationId: string };
  };
  const emailChannel = async (c: Client, port = smtp.port) => {
    const settings = { smtpServer: '127.0.0.1', smtpPort: port, username: 'berth', password: 'mail-secret', fromAddress: 'berth@example.com', toAddresses: ['ops@example.com'], tlsMode: 'none' };
    const r = await c.post('notification.createEmail', { name: 'mail', ...toggles, ...settings });
    t.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.notificationId as string;
  };

  const dave = await invite(admin.client, 'Dave@Example.com');
  // An invitation to an e-mail that has an account (the stranger's, in the other organization).
  const toStranger = await invite(admin.client, 'stranger@example.com', 'admin');

  t.test('user.getUserByToken: the invitation its token belongs to, for whoever holds the token', async t => {
    const r = await anon.get('user.getUserByToken', { token: dave.token });
    t.equal(r.status, 200, 'public: no credentials needed');
    t.same(r.body, { id: dave.id, email: 'dave@example.com', status: 'pending', role: 'member', inviterId: admin.userId, isExpired: false, userAlreadyExists: false });
    t.same((await anon.trpc('query', 'user.getUserByToken', { token: dave.token })).body, { result: { data: { json: r.body } } }, 'the same on tRPC');
    const unknown = await anon.get('user.getUserByToken', { token: 'not-an-invitation-token' });
    t.equal(unknown.status, 404);
    t.match(unknown.body, { code: 'NOT_FOUND', message: /Invitation/ });
    t.equal((await anon.get('user.getUserByToken', { token: dave.id })).status, 404, "its id is not its token (ids are shown to the organization's admins; the token to the invited person)");
    t.equal((await anon.get('user.getUserByToken', { token: '' })).status, 400, 'an empty token is a bad input');
    t.equal((await anon.get('user.getUserByToken', { token: 'x'.repeat(256) })).status, 400, 'and so is a long one');
    t.match((await anon.get('user.getUserByToken', { token: toStranger.token })).body, { email: 'stranger@example.com', role: 'admin', userAlreadyExists: true }, 'an e-mail with an account says so');
  });

  t.test('user.getInvitations: the pending invitations addressed to the caller, with their organization', async t => {
    const again = await invite(admin.client, 'stranger@example.com');
    const canceled = await invite(admin.client, 'stranger@example.com');
    t.equal((await admin.client.post('organization.removeInvitation', { invitationId: canceled.id })).status, 200);
    const expired = await invite(admin.client, 'stranger@example.com');
    const em = server.kernel.container.cradle.orm.em.fork();
    await em.getConnection().execute(`update invitations set expires_at = now() - interval '1 day' where id = ?`, [expired.id]);
    const r = await stranger.client.get('user.getInvitations');
    t.equal(r.status, 200);
    const mine = r.body as { id: string }[];
    t.same(
      mine.map(i => i.id),
      [toStranger.id, again.id],
      'the pending ones, oldest first (not the canceled one, not the expired one)',
    );
    t.match(mine[0], {
      email: 'stranger@example.com',
      role: 'admin',
      status: 'pending',
      organizationId: admin.organizationId,
      inviterId: admin.userId,
      teamId: null,
      organization: { id: admin.organizationId, name: 'My Organization', ownerId: admin.userId },
    });
    t.same((await stranger.client.trpc('query', 'user.getInvitations')).body, { result: { data: { json: r.body } } }, 'the same on tRPC');
    t.same((await member.client.get('user.getInvitations')).body, [], "others' invitations are not the caller's");
    t.same((await admin.client.get('user.getInvitations')).body, [], 'nor are those the caller sent');
    t.match((await anon.get('user.getUserByToken', { token: expired.token })).body, { status: 'pending', isExpired: true }, 'getUserByToken says an invitation expired');
    t.equal((await anon.get('user.getInvitations')).status, 401);
  });

  t.test('user.sendInvitation mails the link through an email channel, with a new token', async t => {
    const notificationId = await emailChannel(admin.client);
    const sent = await admin.client.post('user.sendInvitation', { invitationId: dave.id, notificationId });
    t.equal(sent.status, 200, JSON.stringify(sent.body));
    const link = sent.body as string;
    t.match(link, new RegExp(`^${server.url.replace(/[.]/g, '\\.')}/invitation\\?token=[A-Za-z0-9_-]+$`), "the peer's link: Berth's address, /invitation?token=");
    const token = new URL(link).searchParams.get('token')!;
    t.not(token, dave.token, 'a new token');
    t.equal(smtp.mails.length, 1, 'one mail');
    const mail = smtp.mails[0]!.replace(/=\r?\n/g, '');
    t.match(mail, /^To: dave@example\.com/m, 'to the invited address (not the channel recipients)');
    t.notMatch(mail, /ops@example\.com/, "the channel's own recipients get nothing");
    t.match(mail, /invited to join My Organization/);
    t.ok(mail.includes(token), 'the mail carries the token');
    t.ok(mail.includes(dave.id), 'and the invitation, for auth.createUser');
    t.equal((await anon.get('user.getUserByToken', { token: dave.token })).status, 404, 'the token answered before stops working');
    t.match((await anon.get('user.getUserByToken', { token })).body, { id: dave.id, status: 'pending' }, "the link's token works");

    const again = await admin.client.trpc('mutation', 'user.sendInvitation', { invitationId: dave.id, notificationId });
    t.equal(again.status, 200, 'sent again on tRPC');
    const latest = new URL(again.body.result.data.json).searchParams.get('token')!;
    t.equal(smtp.mails.length, 2);
    t.equal((await anon.get('user.getUserByToken', { token })).status, 404, 'the latest link sent is the one that works');

    const accepted = await anon.post('auth.createUser', { id: dave.id, token: latest, password: 'dave-password-1' });
    t.equal(accepted.status, 200, JSON.stringify(accepted.body));
    t.equal(accepted.body.organizationId, admin.organizationId, 'accepted with the mailed token: Dave joins');
    const done = await admin.client.post('user.sendInvitation', { invitationId: dave.id, notificationId });
    t.equal(done.status, 409, 'an accepted invitation is not sent again');
    t.match(done.body, { code: 'CONFLICT', message: /accepted/ });
    t.equal(smtp.mails.length, 2, 'nothing mailed');
  });

  t.test('user.sendInvitation refusals', async t => {
    const erin = await invite(admin.client, 'erin@example.com');
    const notificationId = await emailChannel(admin.client);
    const before = smtp.mails.length;
    const slack = await admin.client.post('notification.createSlack', { name: 'chat', ...toggles, webhookUrl: 'http://127.0.0.1:9/hook', channel: '#ops' });
    t.equal(slack.status, 200, JSON.stringify(slack.body));
    const notMail = await admin.client.post('user.sendInvitation', { invitationId: erin.id, notificationId: slack.body.notificationId });
    t.equal(notMail.status, 400, 'a channel that does not mail');
    t.match(notMail.body, { code: 'BAD_REQUEST', issues: [{ path: ['notificationId'], message: /slack channel/ }] });

    const theirs = await invite(stranger.client, 'frank@example.com');
    const theirChannel = await emailChannel(stranger.client);
    const aimedInvitation = await admin.client.post('user.sendInvitation', { invitationId: theirs.id, notificationId });
    t.equal(aimedInvitation.status, 404, "another organization's invitation is not found");
    t.notOk(JSON.stringify(aimedInvitation.body).includes('frank'), 'and nothing of it is answered');
    t.equal((await admin.client.post('user.sendInvitation', { invitationId: erin.id, notificationId: theirChannel })).status, 404, "nor is another organization's channel");
    t.equal((await stranger.client.post('user.sendInvitation', { invitationId: erin.id, notificationId: theirChannel })).status, 404, 'the other way round too');
    t.equal((await member.client.post('user.sendInvitation', { invitationId: erin.id, notificationId })).status, 403, 'a member may not');
    t.equal((await anon.post('user.sendInvitation', { invitationId: erin.id, notificationId })).status, 401);
    t.equal((await admin.client.post('user.sendInvitation', { invitationId: '', notificationId })).status, 400, 'an empty id is a bad input');
    t.equal((await admin.client.post('user.sendInvitation', { invitationId: erin.id, notificationId: 'x'.repeat(65) })).status, 400, 'and so is a long one');
    t.equal(smtp.mails.length, before, 'nothing was mailed');
    t.equal((await anon.get('user.getUserByToken', { token: erin.token })).status, 200, 'and the token still works');

    // A mail server that is not there: the reason is answered, and the token before stays good.
    const nowhere = await emailChannel(admin.client, 9);
    const failed = await admin.client.post('user.sendInvitation', { invitationId: erin.id, notificationId: nowhere });
    t.equal(failed.status, 400, JSON.stringify(failed.body));
    t.match(failed.body.message, /Email/, "the channel's reason");
    t.equal((await anon.get('user.getUserByToken', { token: erin.token })).status, 200, 'a failed mail keeps the token before');
  });

  t.test("the link is on Berth's publicUrl when the operator sets one", async t => {
    server = await server.restart({ jobs: false, proxy: 'none', publicUrl: 'https://berth.example.com/' });
    const client = new Client(server.url, { apiKey: admin.apiKey });
    const gina = await invite(client, 'gina@example.com');
    const sent = await client.post('user.sendInvitation', { invitationId: gina.id, notificationId: await emailChannel(client) });
    t.equal(sent.status, 200, JSON.stringify(sent.body));
    t.match(sent.body, /^https:\/\/berth\.example\.com\/invitation\?token=[A-Za-z0-9_-]+$/);
    t.match(smtp.mails.at(-1)!.replace(/=\r?\n/g, ''), /https:\/\/berth\.example\.com\/api\/auth\.createUser/, 'the mail names the call on that address');
  });
});

t.test('without the notification plugin there is no channel to send through: 404, as for an unknown one', async t => {
  const server = await startTestServer({ plugins: ['auth', 'user', 'organization'], jobs: false });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const inv = (await admin.client.post('organization.inviteMember', { email: 'hank@example.com', role: 'member' })).body;
  const r = await admin.client.post('user.sendInvitation', { invitationId: inv.id, notificationId: 'no-such-channel' });
  t.equal(r.status, 404);
  t.match(r.body, { code: 'NOT_FOUND', message: /Notification/ });
  t.equal((await new Client(server.url).get('user.getUserByToken', { token: inv.token })).status, 200, 'and the token still works');
});
