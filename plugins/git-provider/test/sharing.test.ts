// Who in an organization may see and use a git provider connection (the peer's rule, its
// getAccessibleGitProviderIds): the owner and admins, every connection; a member, those they
// connected and those shared with the organization (gitProvider.toggleShare). A member is refused
// (403 naming the field) reading, listing repositories of, linking a workload to
// another member's unshared connection, and changing the git source of a workload that deploys from
// one; the lists leave it out. Sharing opens use, not management (connecting, changing and removing
// connections is an admin's, as the peer's gitProviders permission). Without publicUrl a repository
// links as the peer's, autoDeploy on or off; no webhook is registered, and the delivery log and the
// workload's webhookRegistration say so and how to add one.
import t, { type Test } from 'tap';
import { startTestServer, signUpAdmin, addMember, makeGitRepo, noGrants } from '@berth/core/testing';
import { startFakeBitbucket } from '../../../providers/git-bitbucket/test/bitbucket-api.ts';
import { ok } from './deploy-from.ts';

const bb = await startFakeBitbucket(t);
const repo = await makeGitRepo({ 'README.md': 'shared\n' });
t.teardown(repo.cleanup);
await bb.addGitRepo('team', 'app', repo.dir, { main: repo.commit });

const server = await startTestServer({ providers: { git: { bitbucket: { options: { apiUrl: bb.apiUrl, webUrl: bb.webUrl } } } } });
t.teardown(() => server.destroy());
const { client: owner } = await signUpAdmin(server);
const { client: member, membershipId, userId: memberUserId } = await addMember(server, owner, 'member@example.com', 'admin');
const admin = (await addMember(server, owner, 'second-admin@example.com', 'admin')).client;

const connect = (client: typeof owner, name: string) => ok(client.post('bitbucket.create', bb.connection(name)), `bitbucket.create ${name}`);
const ownersConnection = await connect(owner, "The owner's");
// Connecting is an admin's (as the peer's gitProviders permission): the member connected one while an admin.
const membersConnection = await connect(member, "The member's");
await ok(owner.post('organization.updateMemberRole', { memberId: membershipId, role: 'member' }), 'updateMemberRole');
// A member given every record of the organization (what members could do before roles), so the sharing rules are what decide.
await ok(owner.post('user.assignPermissions', { ...noGrants(memberUserId), allRecords: true }), 'assignPermissions');
const {
  body: { environment },
} = await owner.post('project.create', { name: 'Sharing' });
const source = (bitbucketId: string, bitbucketBranch = 'main') => ({
  bitbucketId,
  bitbucketOwner: 'team',
  bitbucketRepository: 'app',
  bitbucketRepositorySlug: 'app',
  bitbucketBranch,
  bitbucketBuildPath: '/',
});
const ownersApp = await ok(owner.post('application.create', { name: 'owners', environmentId: environment.environmentId }), 'application.create');
const linkedWithAutoDeploy = await owner.post('application.saveBitbucketProvider', { applicationId: ownersApp.applicationId, ...source(ownersConnection.bitbucketId) });
const afterLink = (await owner.get('application.one', { applicationId: ownersApp.applicationId })).body;
// This server has no publicUrl: the workloads below link with autoDeploy off (as the peer's clients may, too).
await ok(owner.post('application.update', { applicationId: ownersApp.applicationId, autoDeploy: false }), 'autoDeploy off (owner)');
await ok(owner.post('application.saveBitbucketProvider', { applicationId: ownersApp.applicationId, ...source(ownersConnection.bitbucketId) }), 'saveBitbucketProvider (owner)');
const membersApp = await ok(member.post('application.create', { name: 'members', environmentId: environment.environmentId }), 'application.create (member)');
await ok(member.post('application.update', { applicationId: membersApp.applicationId, autoDeploy: false }), 'autoDeploy off (member)');
const membersStack = await ok(member.post('compose.create', { name: 'stack', environmentId: environment.environmentId, composeFile: 'services: {}\n' }), 'compose.create (member)');
await ok(member.post('compose.update', { composeId: membersStack.composeId, autoDeploy: false }), 'autoDeploy off (member stack)');

const listed = async (client: typeof owner) => ({
  all: ((await client.get('gitProvider.getAll', {})).body as any[]).map(p => p.name).sort(),
  bitbucket: ((await client.get('bitbucket.bitbucketProviders', {})).body as any[]).map(p => p.gitProvider.name).sort(),
});
const refused = (t: Test, reply: { status: number; body: any }, field: string, what: string) => {
  t.equal(reply.status, 403, `${what}: 403`);
  t.match(reply.body.message, new RegExp(`^${field}: `), `${what}: names ${field}`);
};

t.test("without publicUrl, linking with autoDeploy on links as the peer's, and says that no webhook was registered and how to add one", async t => {
  t.equal(linkedWithAutoDeploy.status, 200, JSON.stringify(linkedWithAutoDeploy.body));
  t.equal(linkedWithAutoDeploy.body, true, "the peer's answer");
  t.match(afterLink, { sourceType: 'bitbucket', autoDeploy: true, bitbucketRepository: 'app' }, 'linked, autoDeploy on');
  t.match(
    afterLink.webhookRegistration,
    /^no webhook registered on team\/app: Berth's public address \(publicUrl\) is not set; add one by hand pointing at \/api\/deploy\/<refreshToken> of this address, or set publicUrl \(BERTH_PUBLIC_URL\)$/,
    'application.one says why and how',
  );
  t.equal(bb.webhooks.get('team/app')?.length ?? 0, 0, 'nothing registered at the forge');
  const stack = await ok(owner.post('compose.create', { name: 'owners stack', environmentId: environment.environmentId, composeFile: 'services: {}\n' }), 'compose.create');
  t.equal((await owner.get('compose.one', { composeId: stack.composeId })).body.webhookRegistration, null, 'a stack with no linked repository: null');
  await ok(owner.post('compose.update', { composeId: stack.composeId, sourceType: 'bitbucket', ...source(ownersConnection.bitbucketId) }), 'a compose stack links with autoDeploy on too');
  t.match((await owner.get('compose.one', { composeId: stack.composeId })).body, {
    sourceType: 'bitbucket',
    webhookRegistration: /^no webhook registered on team\/app: .*\/api\/deploy\/compose\/<refreshToken>/,
  });
  await ok(owner.post('compose.update', { composeId: stack.composeId, sourceType: 'raw' }), 'unlinked');
  t.equal((await owner.get('compose.one', { composeId: stack.composeId })).body.webhookRegistration, null, 'unlinked: null again');
});

t.test('without publicUrl, a link with autoDeploy off registers no webhook, and the delivery log says why, once', async t => {
  await ok(owner.post('application.update', { applicationId: ownersApp.applicationId, description: 'saved again' }), 'saved again');
  const notes = ((await owner.get('application.webhookDeliveries', { applicationId: ownersApp.applicationId })).body as any[]).filter(d => d.event === 'webhook registration');
  t.equal(notes.length, 1, 'one line, not one per save');
  t.match(notes[0], {
    provider: 'bitbucket',
    statusCode: 0,
    decision: /^no webhook registered on team\/app: Berth's public address \(publicUrl\) is not set; add one by hand pointing at \/api\/deploy\/<refreshToken>/,
  });
});

t.test('unshared: a member sees and uses only their own; the owner and an admin see both', async t => {
  t.same(await listed(member), { all: ["The member's"], bitbucket: ["The member's"] }, "the member's lists");
  t.same(await listed(owner), { all: ["The member's", "The owner's"], bitbucket: ["The member's", "The owner's"] }, "the owner's lists");
  t.same((await listed(admin)).all, ["The member's", "The owner's"], "an admin's list");
  const forPermissions = await owner.get('gitProvider.allForPermissions');
  t.same(
    (forPermissions.body as { name: string; providerType: string }[]).map(p => [p.name, p.providerType]).sort(),
    [
      ["The member's", 'bitbucket'],
      ["The owner's", 'bitbucket'],
    ],
    'allForPermissions: every connection of the organization, by id, name and type (no licence)',
  );
  t.same(Object.keys(forPermissions.body[0]).sort(), ['gitProviderId', 'name', 'providerType']);
  t.equal((await member.get('gitProvider.allForPermissions')).status, 403, "a member cannot (the peer's member.update permission)");
  const { bitbucketId, gitProviderId } = ownersConnection;
  refused(t, await member.get('bitbucket.one', { bitbucketId }), 'bitbucketId', 'bitbucket.one');
  refused(t, await member.get('bitbucket.getBitbucketRepositories', { bitbucketId }), 'bitbucketId', 'getBitbucketRepositories');
  refused(t, await member.get('bitbucket.getBitbucketBranches', { bitbucketId, owner: 'team', repo: 'app' }), 'bitbucketId', 'getBitbucketBranches');
  refused(t, await member.post('bitbucket.testConnection', { bitbucketId }), 'bitbucketId', 'testConnection');
  // Changing and removing connections is an admin's (as the peer's gitProviders permission).
  t.equal((await member.post('bitbucket.update', { bitbucketId, gitProviderId, name: 'taken' })).status, 403, 'bitbucket.update');
  t.equal((await member.post('gitProvider.remove', { gitProviderId })).status, 403, 'gitProvider.remove');
  refused(t, await member.post('application.saveBitbucketProvider', { applicationId: membersApp.applicationId, ...source(bitbucketId) }), 'bitbucketId', 'linking an application');
  refused(t, await member.post('compose.update', { composeId: membersStack.composeId, sourceType: 'bitbucket', ...source(bitbucketId) }), 'bitbucketId', 'linking a compose stack');
  refused(
    t,
    await member.post('application.saveBitbucketProvider', { applicationId: ownersApp.applicationId, ...source(bitbucketId, 'release') }),
    'bitbucketId',
    "changing the branch of the owner's application",
  );
  refused(t, await member.post('application.disconnectGitProvider', { applicationId: ownersApp.applicationId }), 'bitbucketId', "disconnecting the owner's application");
  t.equal((await owner.get('application.one', { applicationId: ownersApp.applicationId })).body.bitbucketBranch, 'main', 'the source is as it was');
  // What is not the source stays the member's to change, and whole records resent unchanged pass.
  await ok(member.post('application.update', { applicationId: ownersApp.applicationId, description: 'by the member', bitbucketId, bitbucketBranch: 'main' }), 'an update that leaves the source alone');
  // The member's own connection is theirs to use; the owner and an admin use it too.
  await ok(member.get('bitbucket.getBitbucketRepositories', { bitbucketId: membersConnection.bitbucketId }), "the member's own repositories");
  await ok(member.post('application.saveBitbucketProvider', { applicationId: membersApp.applicationId, ...source(membersConnection.bitbucketId) }), "linking the member's own");
  await ok(admin.get('bitbucket.one', { bitbucketId: membersConnection.bitbucketId }), "an admin reads the member's");
  t.equal((await member.post('gitProvider.toggleShare', { gitProviderId, sharedWithOrganization: true })).status, 403, 'sharing what is not theirs');
});

t.test("shared: the member uses it; changing or removing it stays an admin's", async t => {
  const { bitbucketId, gitProviderId } = ownersConnection;
  t.match((await owner.post('gitProvider.toggleShare', { gitProviderId, sharedWithOrganization: true })).body, { sharedWithOrganization: true });
  t.same(await listed(member), { all: ["The member's", "The owner's"], bitbucket: ["The member's", "The owner's"] }, 'listed to the member');
  t.match(await ok(member.get('bitbucket.getBitbucketRepositories', { bitbucketId }), 'repositories'), [{ slug: 'app' }], 'its repositories');
  t.equal(await ok(member.post('bitbucket.testConnection', { bitbucketId }), 'testConnection'), 'Found 1 repositories');
  await ok(member.post('application.saveBitbucketProvider', { applicationId: ownersApp.applicationId, ...source(bitbucketId, 'release') }), 'the branch changed');
  await ok(member.post('compose.update', { composeId: membersStack.composeId, sourceType: 'bitbucket', ...source(bitbucketId) }), 'a stack linked');
  t.equal((await member.post('bitbucket.update', { bitbucketId, gitProviderId, name: 'taken' })).status, 403, 'bitbucket.update of a shared one');
  t.equal((await member.post('gitProvider.remove', { gitProviderId })).status, 403, 'gitProvider.remove of a shared one');
  await ok(admin.post('bitbucket.update', { bitbucketId, gitProviderId, name: "The owner's" }), 'an admin changes it');

  // Unshared again: the workloads linked meanwhile keep deploying from it, but their source is the owner's to change.
  await ok(owner.post('gitProvider.toggleShare', { gitProviderId, sharedWithOrganization: false }), 'unshared');
  refused(t, await member.post('compose.update', { composeId: membersStack.composeId, bitbucketBranch: 'release' }), 'bitbucketId', "the stack's branch");
  await ok(owner.post('compose.update', { composeId: membersStack.composeId, bitbucketBranch: 'release' }), "the owner changes the stack's branch");
  await ok(owner.post('application.disconnectGitProvider', { applicationId: ownersApp.applicationId }), 'the owner disconnects');
});
