// A member's role and grants decide every procedure, walked from the OpenAPI document (each
// operation's `x-berth-permission`, the one its procedure declares), not from a hand-picked few:
// - a member given nothing calls every operation that needs a permission and is refused 403 naming
//   that permission; given a custom role holding exactly that permission, the same call gets past
//   the check (the positive control: its input, made wrong on purpose, is then judged — 400 — so
//   nothing runs), and a role holding every other permission does not (the permission is the one
//   declared, not any);
// - the operations every member may call (`member`) are listed below with why, and the list is
//   kept current; the owners' and admins' alone (`x-berth-access: admin`) refuse a custom role too;
// - every read naming a project, environment or service answers 404 to a member holding the
//   permission but not the record, and answers once the record is given.
import t from 'tap';
import { statements, type Permission } from '@berth/core';
import { addMember, noGrants, signUpAdmin, startTestServer, type Client, type Reply } from '@berth/core/testing';
import { documentOperations, goodValue, type Operation } from './openapi-operations.ts';

/** The operations every member may call (permission `member`), by why: a regular expression of paths each. */
const EVERY_MEMBER: [RegExp, string][] = [
  [
    /^(user\.(get|one|update|checkUserOrganizations|getBookmarkedTemplates|toggleTemplateBookmark|haveRootAccess|createApiKey|getApiKeys|deleteApiKey|generateToken|getPermissions|getInvitations)|auth\.\w+)$/,
    "the caller's own account, credentials and two-factor login (another's: the services refuse a member)",
  ],
  [/^organization\.(create|all|one|active|update|delete|setDefault)$/, 'the organizations the caller belongs to (updating or deleting one: its own role there, checked by the service)'],
  [
    /^(settings\.(getOpenApiDocument|getIp|haveActivateRequests|getPlatformVersion|getDokployVersion|getUpdateData|getReleaseTag|isUserSubscribed|getLogCleanupStatus)|licenseKey\.haveValidLicenseKey|whitelabeling\.get|stripe\.getCurrentPlan|server\.(count|publicIp|getServerTime))$/,
    "the instance's facts: its version, document, address, licence, name, plan (the peer's reads for every member: the version, isCloud…)",
  ],
  [/^(customRole\.(all|membersByRole|getStatements)|forwardAuth\.listProviders)$/, "the organization's roles and what a role may be given (changing them needs ac.*)"],
  [
    /^(project\.(one|all|homeStats|search)|environment\.(one|byProjectId|search)|\w+\.search|tag\.(all|one|assignToProject|removeFromProject|bulkAssign))$/,
    'lists and reads narrowed to the records given (a record not given: 404, as another organization’s)',
  ],
  [/^compose\.(templates|getTags|previewTemplate)$/, 'the template catalogue: no record of the organization'],
  [
    /^(gitProvider\.(getAll|toggleShare)|(github|gitlab|bitbucket|gitea)\.(one|\w+Providers|get\w+Repositories|get\w+Branches|testConnection|getGiteaUrl))$/,
    "git connections: the caller's own and those shared with the organization (plugins/git-provider sharing rules)",
  ],
  [/^ai\.(getEnabledProviders|getCustomProviders|getModels|testConnection|suggest|analyzeLogs)$/, "the organization's AI configuration, read to ask for a suggestion (setting it is the admins')"],
  [/^network\.\w+$/, "the peer's: every member manages the organization's networks"],
  [/^sshKey\.allForApps$/, 'the names of the keys a service may clone with (no key material)'],
];

/** An input the operation's schema refuses (a field missing or of the wrong type), or null when every input is good. */
function wrongInput(op: Operation): Record<string, unknown> | null {
  const schema = op.schema;
  if ((schema.required ?? []).length) return {};
  for (const [name, field] of Object.entries((schema.properties ?? {}) as Record<string, any>)) {
    const types = new Set([field.type, ...(field.anyOf ?? []).map((f: any) => f.type)].flat().filter(Boolean));
    if (op.method === 'get') {
      // A query's values are text: only a number, an integer, a boolean or a bounded text can be wrong.
      if (types.has('integer') || types.has('number') || types.has('boolean')) if (!types.has('string')) return { [name]: 'not-a-value' };
      if (field.maxLength && !types.has('null')) return { [name]: 'x'.repeat(field.maxLength + 1) };
      continue;
    }
    if (!types.has('number') && !types.has('integer') && types.size) return { [name]: 12345 };
    if (!types.has('string') && types.size) return { [name]: 'not-a-value' };
  }
  return null;
}

const message = (r: Reply) => String(r.body?.message ?? '');
const permissionRefusal = (r: Reply, permission: string) => r.status === 403 && message(r).includes(`needs the permission ${permission}`);
const call = (c: Client, op: Operation, input: Record<string, unknown>) => (op.method === 'get' ? c.get(op.path, input) : c.post(op.path, input));

t.setTimeout(900_000);

t.test("a member's grants and roles decide every procedure", async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const made = (await a.post('project.create', { name: 'Governed' })).body;
  const projectId = made.project.projectId as string;
  const environmentId = made.environment.environmentId as string;
  const applicationId = (await a.post('application.create', { name: 'governed-web', environmentId })).body.applicationId as string;
  const composeId = (await a.post('compose.create', { name: 'governed-stack', environmentId })).body.composeId as string;
  const postgresId = (await a.post('postgres.create', { name: 'governed-db', environmentId, databaseName: 'app', databaseUser: 'app', databasePassword: 'governed-pass-1' })).body.postgresId as string;
  const member = await addMember(server, a, 'governed@example.com', 'member', 'member-password-1', 'token', 'none');
  const c = member.client;

  const doc = (await a.get('settings.getOpenApiDocument')).body;
  const declared = (op: Operation) => doc.paths[`/${op.path}`][op.method] as Record<string, any>;
  const operations = (await documentOperations(a)).filter(op => declared(op)['x-berth-permission'] !== undefined);
  // Operations that act on this machine whatever the input refuse a member by their scope first (test/tenancy.test.ts).
  const instance = (op: Operation) => declared(op)['x-berth-scope'] === 'instance';

  t.test('every operation declares a permission of the statements, or member', async t => {
    const all = new Set(Object.entries(statements).flatMap(([r, actions]) => actions.map(x => `${r}.${x}`)));
    t.same(
      operations.map(op => `${op.path} ${declared(op)['x-berth-permission']}`).filter(s => !all.has(s.split(' ')[1]!) && !s.endsWith(' member')),
      [],
    );
    const publicOnes = (await documentOperations(a)).filter(op => declared(op)['x-berth-scope'] === 'public').length;
    t.comment(`${operations.length} operations declare a permission; ${publicOnes} are public`);
  });

  t.test("the operations every member may call are listed with why, and no other is every member's", async t => {
    const everyMember = operations.filter(op => declared(op)['x-berth-permission'] === 'member').map(op => op.path);
    t.same(
      everyMember.filter(p => !EVERY_MEMBER.some(([re]) => re.test(p))),
      [],
      'each is named by a reason of EVERY_MEMBER',
    );
    t.same(
      EVERY_MEMBER.filter(([re]) => !everyMember.some(p => re.test(p))).map(([, why]) => why),
      [],
      'each reason still names an operation',
    );
    // A member given nothing gets past the check of each (its wrong input answered 400, a good one answered).
    const refused: string[] = [];
    for (const op of operations.filter(op => declared(op)['x-berth-permission'] === 'member' && !instance(op) && op.path !== 'auth.logout')) {
      const r = await call(c, op, wrongInput(op) ?? {});
      if (r.status === 403 && /needs the permission/.test(message(r))) refused.push(`${op.path}: ${message(r)}`);
    }
    t.same(refused, [], 'no operation every member may call refuses one for a permission');
  });

  t.test('each permission is what decides its operations: refused without it, past the check with it alone', async t => {
    const gated = operations.filter(op => declared(op)['x-berth-permission'] !== 'member' && !instance(op));
    // One custom role, its statement changed to hold exactly the permission each operation declares.
    t.equal((await a.post('customRole.create', { roleName: 'one-permission', permissions: {} })).status, 200);
    t.equal((await a.post('customRole.create', { roleName: 'all-but-one', permissions: {} })).status, 200);
    const refusedWithout: string[] = [];
    const refusedWith: string[] = [];
    const adminsAlone: string[] = [];
    let checked = 0;
    const byPermission = new Map<string, Operation[]>();
    for (const op of gated) {
      const p = declared(op)['x-berth-permission'] as Permission;
      byPermission.set(p, [...(byPermission.get(p) ?? []), op]);
    }
    for (const [permission, ops] of byPermission) {
      const [resource, action] = permission.split('.') as [keyof typeof statements, string];
      const others = Object.fromEntries(
        Object.entries(statements)
          .filter(([r]) => !['organization', 'invitation', 'team', 'ac'].includes(r) || r === resource)
          .map(([r, actions]) => [r, actions.filter(x => r !== resource || x !== action)])
          .filter(([r]) => !['organization', 'invitation', 'team', 'ac'].includes(r as string)),
      );
      // Without the permission: a role holding every other one (the organization's own resources,
      // which a custom role is never given: the member role).
      const internal = ['organization', 'invitation', 'team', 'ac'].includes(resource);
      if (internal) await a.post('organization.updateMemberRole', { memberId: member.userId, role: 'member' });
      else {
        t.equal((await a.post('customRole.update', { roleName: 'all-but-one', permissions: others })).status, 200, `a role with every permission but ${permission}`);
        await a.post('organization.updateMemberRole', { memberId: member.userId, role: 'all-but-one' });
      }
      for (const op of ops) {
        const without = await call(c, op, wrongInput(op) ?? {});
        if (declared(op)['x-berth-access'] === 'admin') {
          if (without.status !== 403) refusedWithout.push(`${op.path}: ${without.status} (an admin's alone)`);
          adminsAlone.push(op.path);
        } else if (!permissionRefusal(without, permission)) refusedWithout.push(`${op.path}: ${without.status} ${message(without).slice(0, 120)}`);
      }
      if (!internal) {
        // With the permission alone: past the check (the wrong input judged: 400), or answered.
        t.equal((await a.post('customRole.update', { roleName: 'one-permission', permissions: { [resource]: [action] } })).status, 200);
        await a.post('organization.updateMemberRole', { memberId: member.userId, role: 'one-permission' });
        for (const op of ops.filter(op => declared(op)['x-berth-access'] !== 'admin')) {
          const wrong = wrongInput(op);
          const r = await call(c, op, wrong ?? {});
          checked++;
          // Past the check: the wrong input judged (400), or a refusal of another kind (a host-scoped call without
          // its server is this machine's: 403 naming the field), or answered.
          if (permissionRefusal(r, permission) || message(r) === 'Insufficient access' || (wrong && op.method === 'post' && r.status !== 400 && r.status !== 403))
            refusedWith.push(`${op.path}: ${r.status} ${message(r).slice(0, 120)}`);
        }
      }
    }
    await a.post('organization.updateMemberRole', { memberId: member.userId, role: 'member' });
    t.comment(`${gated.length} operations behind ${byPermission.size} permissions; ${checked} passed with their permission alone; ${adminsAlone.length} are the owners' and admins' alone`);
    t.same(refusedWithout, [], 'without its permission (a role holding every other one), every operation is refused 403 naming it');
    t.same(refusedWith, [], 'the same call gets past the check once a role holds the permission (the positive control)');
    // The admins' alone: a role cannot give them, an admin's call gets past the check.
    for (const path of adminsAlone) {
      const op = gated.find(o => o.path === path)!;
      const r = await call(a, op, wrongInput(op) ?? {});
      t.not(r.status, 403, `${path}: an admin gets past the check`);
    }
  });

  t.test('records given one by one: a read naming a record not given answers 404, and answers once given', async t => {
    const ids: Record<string, string> = { projectId, environmentId, applicationId, composeId, postgresId };
    const reads = operations.filter(
      op => op.method === 'get' && !instance(op) && (op.schema.required ?? []).some((f: string) => f in ids) && (op.schema.required ?? []).every((f: string) => f in ids),
    );
    // A role reading everything, records given none: every read naming a record is refused as not found.
    const readAll = Object.fromEntries(
      Object.entries(statements)
        .filter(([r]) => !['organization', 'invitation', 'team', 'ac'].includes(r))
        .map(([r, actions]): [string, string[]] => [r, actions.filter(x => x === 'read')])
        .filter(([, reads]) => reads.length > 0),
    );
    await a.post('customRole.update', { roleName: 'one-permission', permissions: readAll });
    await a.post('organization.updateMemberRole', { memberId: member.userId, role: 'one-permission' });
    await a.post('user.assignPermissions', noGrants(member.userId));
    const before = new Map<string, Reply>();
    for (const op of reads) before.set(op.path, await c.get(op.path, goodValue('', op.schema, ids) as Record<string, unknown>));
    const wrongly = [...before].filter(([, r]) => r.status !== 404 && !(r.status === 403 && /needs the permission/.test(message(r))));
    t.same(
      wrongly.map(([p, r]) => `${p}: ${r.status}`),
      [],
      'every read naming a record not given is refused (404, as a record of another organization)',
    );
    await a.post('user.assignPermissions', {
      ...noGrants(member.userId),
      accessedProjects: [projectId],
      accessedEnvironments: [environmentId],
      accessedServices: [applicationId, composeId, postgresId],
    });
    const stillRefused: string[] = [];
    for (const op of reads) {
      const was = before.get(op.path)!;
      if (was.status !== 404) continue;
      const r = await c.get(op.path, goodValue('', op.schema, ids) as Record<string, unknown>);
      const theAdmins = await a.get(op.path, goodValue('', op.schema, ids) as Record<string, unknown>);
      if (r.status !== theAdmins.status) stillRefused.push(`${op.path}: ${r.status} (the admin: ${theAdmins.status})`);
    }
    t.same(stillRefused, [], "once given, each answers the member as it answers the organization's admin (the positive control)");
    t.ok(reads.length > 10, `${reads.length} reads name a record`);
  });
});
