// Roles and permissions through the real kernel on a real PostgreSQL: customRole.* (made, listed,
// renamed, removed; bad statements refused naming the field), user.assignPermissions and
// user.getPermissions, and what decides a call — a member given nothing is refused, and the same
// call succeeds once a custom role, a switch or a record gives it; records narrow the lists.
import t from 'tap';
import { addMember, noGrants, otherOrganization, signUpAdmin, startTestServer, type Client } from '@berth/core/testing';

const issuePaths = (r: { body: { issues?: { path: string[] }[] } }) => (r.body.issues ?? []).map(i => i.path.join('.'));

t.test('roles and permissions', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const project = (await a.post('project.create', { name: 'Shop' })).body;
  const environmentId = project.environment.environmentId as string;
  const app = (await a.post('application.create', { name: 'web', environmentId })).body;
  const other = (await a.post('project.create', { name: 'Internal' })).body;
  const plain = await addMember(server, a, 'plain@example.com', 'member', 'member-password-1', 'token', 'none');
  const give = (grants: Record<string, unknown>) => a.post('user.assignPermissions', { ...noGrants(plain.userId), ...grants });

  t.test('customRole.getStatements and getPermissions answer the resources and actions', async t => {
    const statements = (await plain.client.get('customRole.getStatements')).body;
    t.same(statements.service, ['create', 'read', 'delete']);
    t.same(statements.deployment, ['read', 'create', 'cancel']);
    const mine = (await plain.client.get('user.getPermissions')).body;
    t.equal(mine.service.read, true, "the member role reads services it is given (the peer's)");
    t.equal(mine.project.create, false);
    t.equal(mine.notification.read, false, "the organization's records are not a plain member's");
    const admins = (await a.get('user.getPermissions')).body;
    t.ok(
      Object.values(admins).every(actions => Object.values(actions as Record<string, boolean>).every(Boolean)),
      'an owner may do everything',
    );
  });

  t.test('a member given nothing is refused, or answered an empty list', async t => {
    t.same((await plain.client.get('project.all')).body, [], 'no project is listed');
    const one = await plain.client.get('application.one', { applicationId: app.applicationId });
    t.equal(one.status, 404, 'a service not given is not found, as another organization’s');
    const create = await plain.client.post('project.create', { name: 'Mine' });
    t.equal(create.status, 403);
    t.match(create.body.message, /^project\.create needs the permission project\.create, which your role \(member\) does not give/);
    t.equal((await plain.client.get('notification.all')).status, 403, 'notification.read is not the member role’s');
  });

  t.test('records given one by one decide reads and narrow the lists', async t => {
    t.equal((await give({ accessedProjects: [project.project.projectId], accessedEnvironments: [environmentId], accessedServices: [app.applicationId] })).status, 200);
    const one = await plain.client.get('application.one', { applicationId: app.applicationId });
    t.equal(one.status, 200, 'the service given is read');
    const all = (await plain.client.get('project.all')).body as { projectId: string; environments: { applications: { applicationId: string }[] }[] }[];
    t.same(
      all.map(p => p.projectId),
      [project.project.projectId],
      'only the project given is listed (not Internal)',
    );
    t.same(
      all[0]!.environments[0]!.applications.map(x => x.applicationId),
      [app.applicationId],
    );
    t.equal((await plain.client.get('project.one', { projectId: other.project.projectId })).status, 404, 'a project not given is not found');
    const search = (await plain.client.get('project.search', {})).body;
    t.same(
      search.items.map((p: { projectId: string }) => p.projectId),
      [project.project.projectId],
      'project.search is narrowed too',
    );
    // Given again without the service: its lists lose it on the next call.
    await give({ accessedProjects: [project.project.projectId], accessedEnvironments: [environmentId] });
    t.same((await plain.client.get('project.all')).body[0].environments[0].applications, [], 'the service taken back is no longer listed');
    t.equal((await plain.client.get('application.one', { applicationId: app.applicationId })).status, 404, 'nor read');
  });

  t.test("the peer's switches: canCreateProjects, and the creator reaches what it made", async t => {
    t.equal((await plain.client.post('project.create', { name: 'Refused' })).status, 403);
    await give({ canCreateProjects: true });
    const made = await plain.client.post('project.create', { name: 'Made by a member' });
    t.equal(made.status, 200, 'the same call succeeds once the switch is on');
    t.equal((await plain.client.get('project.one', { projectId: made.body.project.projectId })).status, 200, 'its creator reaches the project it made');
    t.same(
      (await plain.client.get('project.all')).body.map((p: { projectId: string }) => p.projectId),
      [made.body.project.projectId],
      'and lists it',
    );
    const member = (await a.get('user.one', { userId: plain.userId })).body;
    t.equal(member.canCreateProjects, true, 'user.one answers the switch');
    t.same(member.accessedProjects, [made.body.project.projectId], 'and the record given at creation');
    t.equal((await plain.client.post('project.remove', { projectId: made.body.project.projectId })).status, 403, 'deleting needs canDeleteProjects');
  });

  t.test('customRole.*: a role decides every call its statement names', async t => {
    const refused = await plain.client.post('customRole.create', { roleName: 'deployer', permissions: { deployment: ['create'] } });
    t.equal(refused.status, 403, 'a plain member makes no role');
    const bad = await a.post('customRole.create', { roleName: 'broken', permissions: { deployment: ['launch'] } });
    t.equal(bad.status, 400);
    t.same(issuePaths(bad), ['permissions.deployment']);
    const unknown = await a.post('customRole.create', { roleName: 'broken', permissions: { spaceship: ['read'] } });
    t.same(issuePaths(unknown), ['permissions.spaceship']);
    const internal = await a.post('customRole.create', { roleName: 'broken', permissions: { organization: ['update'] } });
    t.same(issuePaths(internal), ['permissions.organization'], 'the organization resource is not given to custom roles');
    const reserved = await a.post('customRole.create', { roleName: 'admin', permissions: {} });
    t.same(issuePaths(reserved), ['roleName'], 'the built-in names are taken');

    const made = await a.post('customRole.create', { roleName: 'notifier', permissions: { notification: ['read', 'create'], service: ['read'] } });
    t.equal(made.status, 200);
    t.match(made.body, { role: 'notifier', organizationId: admin.organizationId });
    t.same(JSON.parse(made.body.permission), { notification: ['read', 'create'], service: ['read'] });
    t.equal((await a.post('customRole.create', { roleName: 'notifier', permissions: {} })).status, 409, 'a name once');

    t.equal((await plain.client.get('notification.all')).status, 403, 'before the role: refused');
    t.equal((await a.post('organization.updateMemberRole', { memberId: plain.userId, role: 'notifier' })).status, 200);
    t.equal((await plain.client.get('notification.all')).status, 200, 'the same call succeeds once the role is held');
    t.equal((await plain.client.post('project.create', { name: 'Not with this role' })).status, 403, 'what the statement does not name stays refused (the switches are the member role’s)');
    t.equal((await a.post('organization.updateMemberRole', { memberId: plain.userId, role: 'no-such-role' })).status, 400, 'a role that does not exist is refused');

    const listed = (await a.get('customRole.all')).body;
    t.match(listed, [{ role: 'notifier', permissions: { notification: ['read', 'create'] }, memberCount: 1 }]);
    t.match((await a.get('customRole.membersByRole', { roleName: 'notifier' })).body, [{ userId: plain.userId, email: 'plain@example.com' }]);

    const renamed = await a.post('customRole.update', { roleName: 'notifier', newRoleName: 'watcher', permissions: { service: ['read'] } });
    t.equal(renamed.status, 200);
    t.equal(renamed.body.role, 'watcher');
    t.equal((await a.get('user.one', { userId: plain.userId })).body.role, 'watcher', 'its member holds the renamed role');
    t.equal((await plain.client.get('notification.all')).status, 403, 'the statement changed: refused on the next call');

    t.equal((await a.post('customRole.remove', { roleName: 'watcher' })).status, 400, 'a role still held is not removed');
    await a.post('organization.updateMemberRole', { memberId: plain.userId, role: 'member' });
    t.same((await a.post('customRole.remove', { roleName: 'watcher' })).body, { deleted: 1 });
    t.same((await a.get('customRole.all')).body, []);
  });

  t.test("another organization's roles and members are not reached", async t => {
    const stranger = await addMember(server, a, 'stranger@example.com');
    const theirs: Client = (await otherOrganization(server, stranger.userId)).client;
    t.equal((await theirs.post('customRole.create', { roleName: 'theirs', permissions: { tag: ['read'] } })).status, 200, 'its own role is made (the positive control)');
    t.same((await a.get('customRole.all')).body, [], "this organization does not see the other's role");
    t.equal((await theirs.post('user.assignPermissions', { ...noGrants(plain.userId), canCreateProjects: true })).status, 404, 'nor gives permissions to a member of this one');
    t.equal((await theirs.post('organization.updateMemberRole', { memberId: plain.userId, role: 'theirs' })).status, 404);
  });
});
