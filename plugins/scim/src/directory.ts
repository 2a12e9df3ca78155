// The organization's members as SCIM Users and its roles as SCIM Groups (RFC 7643), for the
// identity provider whose token names the organization. A User is a member of the organization, or
// a user SCIM deprovisioned (active false: no membership, kept with its externalId until deleted);
// its id is the Berth user id, userName the account's e-mail. A Group is a role (admin, member or a
// custom role of the organization); its members are the members holding it. Deprovisioning removes
// the membership and, in the same transaction, the user's sessions and API keys of this
// organization, then drops the credential cache, so the very next call with them is refused. The
// owner is listed and never changed. Nothing here is HTTP: routes.ts answers for it.
import { ApiKey, CustomRole, Member, Session, User, forbidden, isStorable, newId, notFound, parseInput, Type, type Cradle, type EntityManager, type Static } from '@berth/core';
import type { ScimPatchOperation } from 'scim-patch';
import { ScimUser } from './entities.ts';
import { SCHEMA, MAX_RESULTS } from './discovery.ts';
import { invalid, taken } from './errors.ts';

type UserRow = InstanceType<typeof User.class>;
type MemberRow = InstanceType<typeof Member.class>;
type LinkRow = InstanceType<typeof ScimUser.class>;

/** A User of the organization: its account, its membership (none: deprovisioned) and SCIM's link. */
interface Entry {
  user: UserRow;
  member: MemberRow | null;
  link: LinkRow | null;
}

const BUILT_IN_GROUPS = ['admin', 'member'];
/** The role a provisioned or reactivated user gets, and a user taken out of another group goes back to. */
const DEFAULT_ROLE = 'member';

const Text = (what: string) => Type.String({ maxLength: 255, description: what });
const Name = Type.Object({ givenName: Type.Optional(Type.Union([Text('first name'), Type.Null()])), familyName: Type.Optional(Type.Union([Text('last name'), Type.Null()])) });
/** A User as POST and PUT take it (and as a PATCH leaves it): what Berth keeps of it; other attributes are ignored. */
const UserInput = Type.Object({
  schemas: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 20 })),
  userName: Type.String({ minLength: 3, maxLength: 255, pattern: '^[^\\s@]+@[^\\s@]+$', description: "the account's e-mail address" }),
  name: Type.Optional(Type.Union([Name, Type.Null()])),
  active: Type.Optional(Type.Boolean()),
  externalId: Type.Optional(Type.Union([Text("the identity provider's id"), Type.Null()])),
});
type UserInput = Static<typeof UserInput>;

const MemberRef = Type.Object({ value: Type.String({ minLength: 1, maxLength: 64 }) });
const GroupInput = Type.Object({
  schemas: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 20 })),
  displayName: Type.String({ minLength: 1, maxLength: 50 }),
  members: Type.Optional(Type.Array(MemberRef, { maxItems: 10_000 })),
});
type GroupInput = Static<typeof GroupInput>;

/** add, replace or remove, in any case (identity providers send Add and Replace). */
const OPS = '^([aA][dD][dD]|[rR][eE][pP][lL][aA][cC][eE]|[rR][eE][mM][oO][vV][eE])$';
const PatchInput = Type.Object({
  schemas: Type.Array(Type.String({ maxLength: 255 }), { minItems: 1, maxItems: 20 }),
  Operations: Type.Array(
    Type.Object({ op: Type.String({ pattern: OPS, description: 'add, replace or remove' }), path: Type.Optional(Type.String({ maxLength: 1024 })), value: Type.Optional(Type.Unknown()) }),
    { minItems: 1, maxItems: 1000 },
  ),
});
type PatchInput = Static<typeof PatchInput>;

/** How deep a body's values may nest: a SCIM resource nests three levels; far deeper would only exhaust the checks' stack. */
const MAX_DEPTH = 32;

function tooDeep(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) return true;
    for (const item of Object.values(v)) stack.push([item, depth + 1]);
  }
  return false;
}

/** The body checked against `schema`, or a 400 invalidValue naming the attribute (invalidSyntax for the body's shape). */
function checked<T>(schema: Parameters<typeof parseInput>[0], body: unknown, what: string): T {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', `body: a ${what} as a JSON object`);
  if (tooDeep(body)) throw invalid('invalidSyntax', `body: nested deeper than ${MAX_DEPTH} levels`);
  try {
    return parseInput<T>(schema, body, false);
  } catch (e) {
    const issue = (e as { issues?: { message: string }[] }).issues?.[0];
    throw invalid('invalidValue', issue?.message ?? `body: not a ${what}`);
  }
}

/** Accepts "True"/"False" for active, as some identity providers send it in a PATCH. */
const loose = (value: unknown) => (value === 'True' || value === 'true' ? true : value === 'False' || value === 'false' ? false : value);

/** What a list request asks for: a filter (parsed), the first index (1-based) and the page size. */
export interface ListQuery {
  filter?: string;
  startIndex?: string;
  count?: string;
  excludedAttributes?: string;
}

function page<T>(items: T[], q: ListQuery) {
  const int = (name: 'startIndex' | 'count', value: string | undefined, fallback: number) => {
    if (value === undefined || value === '') return fallback;
    if (typeof value !== 'string' || !/^-?\d{1,9}$/.test(value)) throw invalid('invalidValue', `${name}: an integer`);
    return Number(value);
  };
  const startIndex = Math.max(1, int('startIndex', q.startIndex, 1));
  const count = Math.min(MAX_RESULTS, Math.max(0, int('count', q.count, MAX_RESULTS)));
  const Resources = items.slice(startIndex - 1, startIndex - 1 + count);
  return { schemas: [SCHEMA.list], totalResults: items.length, startIndex, itemsPerPage: Resources.length, Resources };
}

/** The filter as a predicate (userName eq "…", and, or, not, co, sw, pr…); strings compare case-insensitively, as userName's caseExact false says. */
async function filterOf(expression: unknown): Promise<(resource: object) => boolean> {
  if (expression === undefined || expression === '') return () => true;
  if (typeof expression !== 'string' || expression.length > 4096) throw invalid('invalidFilter', 'filter: one expression of at most 4096 characters');
  const { parse, Tester } = await import('scim2-parse-filter');
  let ast: ReturnType<typeof parse>;
  try {
    ast = parse(expression);
  } catch (e) {
    throw invalid('invalidFilter', `filter: ${(e as Error).message.slice(0, 200)}`);
  }
  type Value = string | number | boolean | null;
  const fold = <T>(v: T): T => (typeof v === 'string' ? (v.toLowerCase() as T) : v);
  class Folding extends Tester {
    override eq(r: unknown, v: Value) {
      return super.eq(fold(r), fold(v));
    }
    override ne(r: unknown, v: Value) {
      return super.ne(fold(r), fold(v));
    }
    override co(r: unknown, v: Value) {
      return super.co(fold(r), fold(v));
    }
    override sw(r: unknown, v: Value) {
      return super.sw(fold(r), fold(v));
    }
    override ew(r: unknown, v: Value) {
      return super.ew(fold(r), fold(v));
    }
  }
  const tester = new Folding();
  return resource => tester.test(resource, ast);
}

/** Applies a PATCH request's operations to a resource (scim-patch, RFC 7644 §3.5.2), as a 400 of the protocol's type when they do not apply. */
async function patched(resource: { schemas: string[]; meta: object }, body: unknown): Promise<Record<string, unknown>> {
  const request = checked<PatchInput>(PatchInput, body, 'PatchOp request');
  if (!request.schemas.includes(SCHEMA.patch)) throw invalid('invalidSyntax', `schemas: must hold ${SCHEMA.patch}`);
  const operations: ScimPatchOperation[] = request.Operations.map(({ op, path, value }, i) => {
    const kind = op.toLowerCase();
    if (kind === 'add' || kind === 'replace') return { op: kind, ...(path === undefined ? {} : { path }), value };
    if (path === undefined) throw invalid('noTarget', `Operations.${i}.path: a remove names what it removes`);
    return { op: 'remove', path, ...(value === undefined ? {} : { value }) };
  });
  const { scimPatch } = await import('scim-patch');
  // meta is no attribute a PATCH changes: scim-patch's type wants its dates, which it never reads.
  const { meta: _meta, ...attributes } = resource;
  try {
    return scimPatch({ ...structuredClone(attributes), meta: { created: new Date(0), lastModified: new Date(0) } }, operations, { mutateDocument: false });
  } catch (e) {
    const code = (e as { scimCode?: string }).scimCode;
    const type = code === 'invalidPath' || code === 'noTarget' || code === 'invalidSyntax' ? code : 'invalidValue';
    throw invalid(type, `Operations: ${(e as Error).message.slice(0, 300)}`);
  }
}

/** A User as SCIM shows it. */
function userResource(base: string, { user, member, link }: Entry) {
  const formatted = [user.firstName, user.lastName].filter(Boolean).join(' ');
  return {
    schemas: [SCHEMA.user],
    id: user.id,
    ...(link?.externalId ? { externalId: link.externalId } : {}),
    userName: user.email,
    name: { givenName: user.firstName, familyName: user.lastName, formatted },
    displayName: formatted || user.email,
    emails: [{ value: user.email, primary: true, type: 'work' }],
    active: member !== null,
    groups: member && member.role !== 'owner' ? [{ value: member.role, display: member.role, $ref: `${base}/Groups/${encodeURIComponent(member.role)}` }] : [],
    meta: {
      resourceType: 'User',
      created: (link?.createdAt ?? member?.createdAt ?? user.createdAt).toISOString(),
      lastModified: [user.updatedAt, link?.updatedAt]
        .filter((d): d is Date => !!d)
        .sort((a, b) => b.getTime() - a.getTime())[0]!
        .toISOString(),
      location: `${base}/Users/${user.id}`,
    },
  };
}

type UserResource = ReturnType<typeof userResource>;

/** A Group as SCIM shows it: a role and the members holding it. */
interface GroupResource {
  schemas: string[];
  id: string;
  displayName: string;
  members: { value: string; display: string; $ref: string }[];
  meta: { resourceType: string; location: string };
}

export class ScimDirectory {
  readonly #cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  #em(): EntityManager {
    return this.#cradle().orm.em.fork() as EntityManager;
  }

  // ---------------------------------------------------------------- Users

  /** Every User of the organization, oldest first: its members and the users SCIM deprovisioned. */
  async #entries(em: EntityManager, organizationId: string): Promise<Entry[]> {
    const [members, links] = await Promise.all([em.find(Member, { organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } }), em.find(ScimUser, { organizationId })]);
    const ids = [...new Set([...members.map(m => m.userId), ...links.map(l => l.userId)])];
    const users = new Map((await em.find(User, { id: { $in: ids } })).map(u => [u.id, u]));
    const linkOf = new Map(links.map(l => [l.userId, l]));
    const memberOf = new Map(members.map(m => [m.userId, m]));
    return ids.filter(id => users.has(id)).map(id => ({ user: users.get(id)!, member: memberOf.get(id) ?? null, link: linkOf.get(id) ?? null }));
  }

  async #entry(em: EntityManager, organizationId: string, userId: string): Promise<Entry> {
    // No user's id holds what PostgreSQL cannot compare (a NUL, half a surrogate pair).
    if (typeof userId !== 'string' || userId.length > 64 || !isStorable(userId)) throw notFound('User');
    const [member, link] = await Promise.all([em.findOne(Member, { organizationId, userId }), em.findOne(ScimUser, { organizationId, userId })]);
    const user = member || link ? await em.findOne(User, { id: userId }) : null;
    if (!user) throw notFound('User');
    return { user, member, link };
  }

  async listUsers(organizationId: string, base: string, q: ListQuery) {
    const keep = await filterOf(q.filter);
    const resources = (await this.#entries(this.#em(), organizationId)).map(e => userResource(base, e)).filter(keep);
    return page(resources, q);
  }

  async getUser(organizationId: string, base: string, userId: string) {
    return userResource(base, await this.#entry(this.#em(), organizationId, userId));
  }

  /** Provisions a user: the account (no password: they sign in by single sign-on or an invitation) if the e-mail has none, and a membership with the default role. */
  async createUser(organizationId: string, base: string, body: unknown) {
    const input = checked<UserInput>(UserInput, body, 'User');
    const email = input.userName.trim().toLowerCase();
    const em = this.#em();
    const entry = await em.transactional(async tx => {
      let user = await tx.findOne(User, { email });
      if (user && ((await tx.count(Member, { organizationId, userId: user.id })) || (await tx.count(ScimUser, { organizationId, userId: user.id })))) {
        throw taken(`userName: ${email} is already a user of this organization (id ${user.id})`);
      }
      user ??= tx.create(User, {
        id: newId(),
        email,
        passwordHash: null,
        firstName: input.name?.givenName ?? '',
        lastName: input.name?.familyName ?? '',
        image: null,
        twoFactorSecret: null,
        twoFactorEnabled: false,
        defaultOrganizationId: organizationId,
        createdAt: new Date(),
        updatedAt: new Date(),
      });
      const active = input.active ?? true;
      const link = tx.create(ScimUser, { id: newId(), organizationId, userId: user.id, externalId: input.externalId ?? null, active, createdAt: new Date(), updatedAt: new Date() });
      const member = active ? tx.create(Member, { id: newId(), organizationId, userId: user.id, role: DEFAULT_ROLE, createdAt: new Date() }) : null;
      await tx.flush();
      return { user, member, link };
    });
    this.#cradle().sessions.invalidate();
    return userResource(base, entry);
  }

  /** PUT: the user as given (userName, name, active, externalId). */
  async replaceUser(organizationId: string, base: string, userId: string, body: unknown) {
    const input = checked<UserInput>(UserInput, body, 'User');
    return this.#change(organizationId, base, userId, () => input);
  }

  /** PATCH: the operations applied to the user as SCIM shows it, then kept as a PUT of the result. */
  async patchUser(organizationId: string, base: string, userId: string, body: unknown) {
    return this.#change(organizationId, base, userId, async current => {
      const result = await patched(current, body);
      return checked<UserInput>(UserInput, { ...result, active: loose(result.active) }, 'User');
    });
  }

  async #change(organizationId: string, base: string, userId: string, next: (current: UserResource) => UserInput | Promise<UserInput>) {
    const em = this.#em();
    const entry = await em.transactional(async tx => {
      const entry = await this.#entry(tx, organizationId, userId);
      if (entry.member?.role === 'owner') throw forbidden("The organization's owner is not changed through SCIM");
      const input = await next(userResource(base, entry));
      const { user } = entry;
      const email = input.userName.trim().toLowerCase();
      if (email !== user.email) {
        if (await tx.count(User, { email })) throw taken(`userName: ${email} is another account's`);
        // As user.update by an admin: an account of other organizations too keeps its e-mail (those organizations have a say).
        if (await tx.count(Member, { userId, organizationId: { $ne: organizationId } }))
          throw forbidden('userName: this account belongs to other organizations too: its e-mail is changed by its holder');
        user.email = email;
      }
      if (input.name?.givenName !== undefined) user.firstName = input.name.givenName ?? '';
      if (input.name?.familyName !== undefined) user.lastName = input.name.familyName ?? '';
      const active = input.active ?? true;
      entry.link ??= tx.create(ScimUser, { id: newId(), organizationId, userId, externalId: null, active, createdAt: new Date(), updatedAt: new Date() });
      entry.link.externalId = input.externalId ?? null;
      entry.link.active = active;
      if (!active && entry.member) {
        await this.#deprovision(tx, organizationId, userId, entry.member);
        entry.member = null;
      } else if (active && !entry.member) {
        entry.member = tx.create(Member, { id: newId(), organizationId, userId, role: DEFAULT_ROLE, createdAt: new Date() });
      }
      await tx.flush();
      return entry;
    });
    this.#cradle().sessions.invalidate();
    return userResource(base, entry);
  }

  /** The membership goes, and with it every session and API key of the user acting in this organization. */
  async #deprovision(tx: EntityManager, organizationId: string, userId: string, member: MemberRow): Promise<void> {
    tx.remove(member);
    await tx.nativeDelete(Session, { userId, organizationId });
    await tx.nativeDelete(ApiKey, { userId, organizationId });
  }

  /** DELETE: deprovisioned and forgotten; the account goes too when it belongs nowhere else. */
  async deleteUser(organizationId: string, userId: string): Promise<void> {
    const em = this.#em();
    await em.transactional(async tx => {
      const entry = await this.#entry(tx, organizationId, userId);
      if (entry.member?.role === 'owner') throw forbidden("The organization's owner is not removed through SCIM");
      if (entry.member) await this.#deprovision(tx, organizationId, userId, entry.member);
      if (entry.link) tx.remove(entry.link);
      await tx.flush();
      if (!(await tx.count(Member, { userId })) && !(await tx.count(ScimUser, { userId }))) {
        await tx.nativeDelete(Session, { userId });
        await tx.nativeDelete(ApiKey, { userId });
        await tx.nativeDelete(User, { id: userId });
      }
    });
    this.#cradle().sessions.invalidate();
  }

  // ---------------------------------------------------------------- Groups

  /** The organization's roles: the built-in ones and its custom roles. */
  async #roles(em: EntityManager, organizationId: string): Promise<string[]> {
    const custom = (await em.find(CustomRole, { organizationId }, { orderBy: { role: 'asc' } })).map(r => r.role);
    return [...BUILT_IN_GROUPS, ...custom.filter(r => !BUILT_IN_GROUPS.includes(r) && r !== 'owner')];
  }

  async #groupResources(em: EntityManager, organizationId: string, base: string, roles: string[]): Promise<GroupResource[]> {
    const entries = (await this.#entries(em, organizationId)).filter(e => e.member);
    return roles.map(role => ({
      schemas: [SCHEMA.group],
      id: role,
      displayName: role,
      members: entries.filter(e => e.member!.role === role).map(e => ({ value: e.user.id, display: e.user.email, $ref: `${base}/Users/${e.user.id}` })),
      meta: { resourceType: 'Group', location: `${base}/Groups/${encodeURIComponent(role)}` },
    }));
  }

  async #group(em: EntityManager, organizationId: string, base: string, id: string): Promise<GroupResource> {
    const roles = await this.#roles(em, organizationId);
    if (typeof id !== 'string' || !roles.includes(id)) throw notFound('Group');
    return (await this.#groupResources(em, organizationId, base, [id]))[0]!;
  }

  async listGroups(organizationId: string, base: string, q: ListQuery) {
    const keep = await filterOf(q.filter);
    const em = this.#em();
    const withoutMembers = typeof q.excludedAttributes === 'string' && q.excludedAttributes.split(',').some(a => a.trim().toLowerCase() === 'members');
    const groups = (await this.#groupResources(em, organizationId, base, await this.#roles(em, organizationId))).filter(keep);
    return page(withoutMembers ? groups.map(({ members: _members, ...g }) => g) : groups, q);
  }

  async getGroup(organizationId: string, base: string, id: string) {
    return this.#group(this.#em(), organizationId, base, id);
  }

  /** Groups are the organization's roles: one is not made through SCIM (a custom role is made with customRole.create). */
  async createGroup(organizationId: string, body: unknown): Promise<never> {
    const input = checked<GroupInput>(GroupInput, body, 'Group');
    if ((await this.#roles(this.#em(), organizationId)).includes(input.displayName)) throw taken(`displayName: the group ${input.displayName} exists (id ${input.displayName})`);
    throw forbidden(`displayName: no role of this organization is named ${input.displayName}; groups are the organization's roles, and a custom role is made with customRole.create`);
  }

  /** PUT: the group's members are exactly those given. */
  async replaceGroup(organizationId: string, base: string, id: string, body: unknown) {
    const input = checked<GroupInput>(GroupInput, body, 'Group');
    return this.#setMembers(organizationId, base, id, () => input);
  }

  /** PATCH: add, remove or replace members (members[value eq "…"] paths too). */
  async patchGroup(organizationId: string, base: string, id: string, body: unknown) {
    return this.#setMembers(organizationId, base, id, async current => checked<GroupInput>(GroupInput, await patched(current, body), 'Group'));
  }

  async #setMembers(organizationId: string, base: string, id: string, next: (current: GroupResource) => GroupInput | Promise<GroupInput>) {
    const em = this.#em();
    await em.transactional(async tx => {
      const current = await this.#group(tx, organizationId, base, id);
      const input = await next(current);
      if (input.displayName !== id) throw invalid('mutability', `displayName: a group's name is its role's (${id}) and does not change`);
      const wanted = new Set((input.members ?? []).map(m => m.value));
      const held = new Set(current.members.map(m => m.value));
      const members = new Map((await tx.find(Member, { organizationId, userId: { $in: [...wanted, ...held] } })).map(m => [m.userId, m]));
      for (const userId of wanted) {
        if (held.has(userId)) continue;
        const member = members.get(userId);
        if (!member) throw invalid('invalidValue', `members: ${userId} is no active user of this organization`);
        if (member.role === 'owner') throw forbidden("members: the organization's owner is not changed through SCIM");
        member.role = id;
      }
      for (const userId of held) {
        if (wanted.has(userId)) continue;
        if (id === DEFAULT_ROLE) throw invalid('invalidValue', `members: ${userId} leaves the ${DEFAULT_ROLE} group by joining another group, or by being deprovisioned`);
        members.get(userId)!.role = DEFAULT_ROLE;
      }
      await tx.flush();
    });
    // The role is part of every cached credential's principal.
    this.#cradle().sessions.invalidate();
    return this.#group(this.#em(), organizationId, base, id);
  }

  /** Groups are roles: they are not removed through SCIM (404 for one that is none). */
  async deleteGroup(organizationId: string, id: string): Promise<never> {
    if (!(await this.#roles(this.#em(), organizationId)).includes(id)) throw notFound('Group');
    throw forbidden(`The group ${id} is a role of the organization: it is not removed through SCIM`);
  }
}
