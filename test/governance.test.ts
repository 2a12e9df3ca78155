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
// People who come in from outside are governed the same way, through real identity providers on
// loopback (plugins/sso/test/idp.ts): one who signs in through an OpenID provider, and one through
// a SAML identity provider, is a member given nothing (a call needing a permission: 403; a record
// not given: 404) until the admin grants it, and then the same call succeeds; one an identity
// provider provisions over SCIM signs in as the account SCIM made, is governed by its grants, and,
// deprovisioned, has its session and API key refused on the very next call and its sign-in refused.
import t, { type Test } from 'tap';
import { statements, type Permission } from '@berth/core';
import { addMember, Client, noGrants, signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';
import { browseToCallback, samlIdentityProvider, startOpenIdProvider } from '../plugins/sso/test/idp.ts';
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
/** The answer's status is `status`; its body is told only when it is not. */
const answers = (t: Test, r: { status: number; body: unknown }, status: number, what: string) =>
  t.equal(r.status, status, r.status === status ? what : `${what}: ${JSON.stringify(r.body).slice(0, 300)}`);

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

t.test('people come in through OIDC, SAML and SCIM, and their grants decide what they may do', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const projectId = (await a.post('project.create', { name: 'Governed from outside' })).body.project.projectId as string;

  // The organization's identity providers: an OpenID provider and a SAML identity provider, each for its domain.
  const CLIENT = { clientId: 'berth', clientSecret: 'the-client-secret-of-berth' };
  const idp = await startOpenIdProvider({ ...CLIENT, redirectUris: [`${server.url}/api/sso/callback/corp-oidc`] });
  t.teardown(() => idp.close());
  const saml = samlIdentityProvider();
  const acs = `${server.url}/api/sso/saml2/callback/corp-saml`;
  const spEntityId = 'https://berth.example.com/sp';
  const oidcRegistered = await a.post('sso.register', { providerId: 'corp-oidc', issuer: idp.issuer, domains: ['oidc.example.com'], oidcConfig: CLIENT });
  answers(t, oidcRegistered, 200, 'an OpenID provider is registered for oidc.example.com');
  const samlConfig = { entryPoint: saml.entryPoint, cert: saml.cert, callbackUrl: acs, audience: spEntityId, idpMetadata: { entityID: saml.entityId }, spMetadata: { entityID: spEntityId } };
  const samlRegistered = await a.post('sso.register', { providerId: 'corp-saml', issuer: saml.entityId, domains: ['saml.example.com'], samlConfig });
  answers(t, samlRegistered, 200, 'a SAML identity provider is registered for saml.example.com');

  /** Berth's 302 to the provider, where a browser's sign-in starts. */
  const start = async (providerId: string) => {
    const res = await fetch(`${server.url}/api/sso/${providerId}/sign-in`, { redirect: 'manual' });
    if (res.status !== 302) throw new Error(`sign-in through ${providerId}: ${res.status} ${await res.text()}`);
    return res.headers.get('location')!;
  };
  /** Berth's answer to a sign-in: its status and body, and the session its berth_session cookie holds. */
  const answered = async (res: Response) => {
    const text = await res.text();
    const cookie = /^berth_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
    return { status: res.status, body: text ? JSON.parse(text) : null, cookie };
  };
  /** A browser signing `email` in through the OpenID provider, back to Berth's callback. */
  const signInWithOidc = async (email: string) => {
    const back = await browseToCallback(await start('corp-oidc'), email, `${server.url}/api/sso/callback/`);
    return answered(await fetch(back, { redirect: 'manual' }));
  };
  /** A browser posting the SAML identity provider's signed assertion for `email` to Berth's assertion consumer service. */
  const signInWithSaml = async (email: string) => {
    const form = saml.respond(await start('corp-saml'), { email, acs, audience: spEntityId });
    return answered(await fetch(acs, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() }));
  };
  /** The organization's members by e-mail, with their roles (user.all, as the admin sees them). */
  const members = async () => new Map(((await a.get('user.all')).body as { role: string; user: { email: string } }[]).map(m => [m.user.email, m.role]));
  const refusedFor = (r: Reply, permission: string) => r.status === 403 && message(r).includes(`needs the permission ${permission}`);

  t.test('signed in through OIDC: a member given nothing, who may create a project once granted it', async t => {
    const answer = await signInWithOidc('olive@oidc.example.com');
    answers(t, answer, 200, 'signed in through the OpenID provider');
    t.equal(answer.cookie, answer.body.token, 'the berth_session cookie holds the session answered');
    t.equal(answer.body.organizationId, admin.organizationId, "signed in to the provider's organization");
    // The API takes the session as a bearer token (the cookie is the browser's and forward auth's).
    const olive = new Client(server.url, { token: answer.cookie });
    const me = await olive.get('user.get');
    answers(t, me, 200, 'the session is a Berth session');
    t.match(me.body, { role: 'member', user: { email: 'olive@oidc.example.com' } }, 'a just-in-time member with the default role');
    t.equal((await members()).get('olive@oidc.example.com'), 'member', 'user.all lists her as a member');

    const refused = await olive.post('project.create', { name: 'Olive’s' });
    t.ok(refusedFor(refused, 'project.create'), `refused before the grant: ${refused.status} ${message(refused)}`);
    const granted = await a.post('user.assignPermissions', { ...noGrants(answer.body.userId), canCreateProjects: true });
    answers(t, granted, 200, 'the admin grants her canCreateProjects');
    const made = await olive.post('project.create', { name: 'Olive’s' });
    answers(t, made, 200, 'the same call succeeds once granted (the positive control)');
    t.equal(made.body.project?.name, 'Olive’s', 'the project she made');
    answers(t, await a.post('user.assignPermissions', noGrants(answer.body.userId)), 200, 'the admin withdraws the grant');
    t.ok(refusedFor(await olive.post('project.create', { name: 'Olive’s again' }), 'project.create'), 'the grant withdrawn: refused again on the next call');
  });

  t.test('signed in through SAML: a member given no record, who may read the project once given it', async t => {
    const answer = await signInWithSaml('sam@saml.example.com');
    answers(t, answer, 200, 'signed in through the SAML identity provider');
    t.equal(answer.cookie, answer.body.token, 'the berth_session cookie holds the session answered');
    const sam = new Client(server.url, { token: answer.cookie });
    t.match((await sam.get('user.get')).body, { role: 'member', user: { email: 'sam@saml.example.com' } }, 'a just-in-time member with the default role');
    t.equal((await members()).get('sam@saml.example.com'), 'member', 'user.all lists him as a member');

    const notGiven = await sam.get('project.one', { projectId });
    answers(t, notGiven, 404, "a project not given is not found, as another organization's");
    t.ok(refusedFor(await sam.post('project.create', { name: 'Sam’s' }), 'project.create'), "another member's switch is not his");
    const given = await a.post('user.assignPermissions', { ...noGrants(answer.body.userId), accessedProjects: [projectId] });
    answers(t, given, 200, 'the admin gives him the project');
    const read = await sam.get('project.one', { projectId });
    answers(t, read, 200, 'the same read answers once the project is given (the positive control)');
    t.equal(read.body.name, 'Governed from outside', 'the project read');
  });

  t.test('provisioned over SCIM: signs in as the account SCIM made, is governed by its grants, and deprovisioned is refused at once', async t => {
    const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
    const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
    const made = await a.post('scim.generateToken', { providerId: 'corp-directory' });
    answers(t, made, 200, 'the admin makes a SCIM token');
    const scimToken = made.body.scimToken as string;
    const scim = (method: string, path: string, body?: unknown) =>
      new Client(server.url).raw(`/scim/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${scimToken}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    const provisioned = await scim('POST', '/Users', { schemas: [USER], userName: 'sally@oidc.example.com', name: { givenName: 'Sally', familyName: 'Ride' }, externalId: 'dir-sally' });
    answers(t, provisioned, 201, 'the directory provisions sally@oidc.example.com');
    const sallyId = provisioned.body.id as string;
    t.equal((await members()).get('sally@oidc.example.com'), 'member', 'user.all lists her as a member with the default role');

    // She signs in through the organization's OpenID provider: the account SCIM made, not a new one.
    const answer = await signInWithOidc('sally@oidc.example.com');
    answers(t, answer, 200, 'she signs in through the OpenID provider');
    t.equal(answer.body.userId, sallyId, 'signed in as the provisioned account');
    const session = new Client(server.url, { token: answer.cookie });
    const keyMade = await session.post('user.createApiKey', { name: 'sally', metadata: { organizationId: admin.organizationId } });
    answers(t, keyMade, 200, 'her session makes her an API key');
    const key = new Client(server.url, { apiKey: keyMade.body.key });

    // Her grants decide: a project not given, then given.
    t.equal((await key.get('project.one', { projectId })).status, 404, 'a project not given: 404');
    t.ok(refusedFor(await session.post('project.create', { name: 'Sally’s' }), 'project.create'), 'a call needing a permission: 403');
    answers(t, await a.post('user.assignPermissions', { ...noGrants(sallyId), canCreateProjects: true, accessedProjects: [projectId] }), 200, 'the admin grants her canCreateProjects and the project');
    t.equal((await key.get('project.one', { projectId })).status, 200, 'given: her API key reads it (the positive control)');
    t.equal((await session.post('project.create', { name: 'Sally’s' })).status, 200, 'granted: her session creates a project (the positive control)');

    // Deprovisioned: both credentials, which worked just above, are refused on the very next call.
    t.equal((await session.get('user.get')).status, 200, 'her session works before');
    const off = await scim('PATCH', `/Users/${sallyId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
    answers(t, off, 200, 'the directory deprovisions her (active false)');
    t.equal(off.body.active, false, 'SCIM answers her inactive');
    t.equal((await session.get('user.get')).status, 401, 'her session is refused at once');
    t.equal((await key.get('project.one', { projectId })).status, 401, 'so is her API key');
    t.notOk((await members()).has('sally@oidc.example.com'), 'user.all no longer lists her');
    const again = await signInWithOidc('sally@oidc.example.com');
    answers(t, again, 403, 'signing in again through the provider is refused (it succeeded above)');
    t.match(again.body?.message, /no member of the provider's organization/, 'as no member of the organization');
    t.notOk(again.cookie, 'and no session is set');

    // Reactivated: a member again, given nothing (the grants went with the membership) and signing in again.
    const on = await scim('PATCH', `/Users/${sallyId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] });
    t.match(on, { status: 200, body: { active: true } }, 'the directory reactivates her');
    const back = await signInWithOidc('sally@oidc.example.com');
    answers(t, back, 200, 'she signs in again');
    const backSession = new Client(server.url, { token: back.cookie });
    t.equal((await backSession.get('project.one', { projectId })).status, 404, 'the project given before is not given again');
    t.equal((await key.get('user.get')).status, 401, 'the revoked API key stays revoked');

    // DELETE: deprovisioned and forgotten.
    answers(t, await scim('DELETE', `/Users/${sallyId}`), 204, 'the directory deletes her');
    t.equal((await backSession.get('user.get')).status, 401, 'her new session is refused at once');
    t.notOk((await members()).has('sally@oidc.example.com'), 'user.all no longer lists her');
    t.equal((await scim('GET', `/Users/${sallyId}`)).status, 404, 'and SCIM no longer knows her');
  });
});
