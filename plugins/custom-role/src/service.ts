// An organization's custom roles: made, renamed, changed and removed by its owner and admins. Every
// change reaches the next call of every member (the kernel forgets the credentials it verified).
import { CustomRole, Member, RequestScope, User, conflict, invalidField, iso, newId, notFound, statementIssue } from '@berth/core';
import type { RoleMember, RoleRow, RoleSummary } from './schemas.ts';

const BUILT_IN = ['owner', 'admin', 'member'];
/** The peer's limit: ten custom roles per organization. */
export const MAX_ROLES = 10;
/** Resources the peer keeps for its own organization plugin; a custom role cannot be given them. */
const INTERNAL_RESOURCES = ['organization', 'invitation', 'team', 'ac'];

type Row = InstanceType<typeof CustomRole.class>;
const toRow = (r: Row): RoleRow => ({ id: r.id, organizationId: r.organizationId, role: r.role, permission: JSON.stringify(r.permission), createdAt: iso(r.createdAt)!, updatedAt: iso(r.updatedAt) });

/** 400 naming the field when a statement names an unknown or internal resource, or an unknown action. */
function checkStatement(permissions: Record<string, string[]>): Record<string, string[]> {
  for (const resource of Object.keys(permissions))
    if (INTERNAL_RESOURCES.includes(resource)) throw invalidField(`permissions.${resource}`, 'managed by Berth itself: a custom role cannot be given it');
  const issue = statementIssue(permissions);
  if (issue) throw invalidField(issue.slice(0, issue.indexOf(':')), issue.slice(issue.indexOf(':') + 2));
  // Each action once, in the statements' order of the request.
  return Object.fromEntries(Object.entries(permissions).map(([resource, actions]) => [resource, [...new Set(actions)]]));
}

const reserved = (field: string, name: string) => {
  if (BUILT_IN.includes(name)) throw invalidField(field, 'owner, admin and member are the built-in roles');
};

export class CustomRoles extends RequestScope {
  async all(): Promise<RoleSummary[]> {
    const roles = await this.em.find(CustomRole, { organizationId: this.organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const counts = await this.#memberCounts();
    return roles.map(r => ({ role: r.role, permissions: r.permission, createdAt: iso(r.createdAt)!, ids: [r.id], memberCount: counts.get(r.role) ?? 0 }));
  }

  async create(roleName: string, permissions: Record<string, string[]>): Promise<RoleRow> {
    reserved('roleName', roleName);
    const statement = checkStatement(permissions);
    const names = await this.em.find(CustomRole, { organizationId: this.organizationId }, { fields: ['role'] });
    if (names.some(r => r.role === roleName)) throw conflict(`Role "${roleName}" already exists`);
    if (names.length >= MAX_ROLES) throw invalidField('roleName', `an organization has at most ${MAX_ROLES} custom roles`);
    const row = this.em.create(CustomRole, { id: newId(), organizationId: this.organizationId, role: roleName, permission: statement, createdAt: new Date() });
    await this.em.flush();
    return toRow(row);
  }

  /** Changes the statement and, with newRoleName, renames the role and every membership that holds it. */
  async update(roleName: string, newRoleName: string | undefined, permissions: Record<string, string[]>): Promise<RoleRow> {
    reserved('roleName', roleName);
    if (newRoleName !== undefined) reserved('newRoleName', newRoleName);
    const statement = checkStatement(permissions);
    const row = await this.em.findOne(CustomRole, { organizationId: this.organizationId, role: roleName });
    if (!row) throw notFound(`Role "${roleName}"`);
    await this.em.transactional(async em => {
      if (newRoleName !== undefined && newRoleName !== roleName) {
        if (await em.count(CustomRole, { organizationId: this.organizationId, role: newRoleName })) throw conflict(`Role "${newRoleName}" already exists`);
        await em.nativeUpdate(Member, { organizationId: this.organizationId, role: roleName }, { role: newRoleName });
        row.role = newRoleName;
      }
      row.permission = statement;
    });
    this.cradle.sessions.invalidate();
    return toRow(row);
  }

  /** Removes a role no member holds (the peer's rule: reassign them first). */
  async remove(roleName: string): Promise<{ deleted: number }> {
    reserved('roleName', roleName);
    const holders = await this.em.count(Member, { organizationId: this.organizationId, role: roleName });
    if (holders > 0) throw invalidField('roleName', `${holders} member(s) hold the role "${roleName}": give them another role first`);
    const deleted = await this.em.nativeDelete(CustomRole, { organizationId: this.organizationId, role: roleName });
    if (!deleted) throw notFound(`Role "${roleName}"`);
    this.cradle.sessions.invalidate();
    return { deleted };
  }

  async membersByRole(roleName: string): Promise<RoleMember[]> {
    const members = await this.em.find(Member, { organizationId: this.organizationId, role: roleName }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const users = new Map((await this.em.find(User, { id: { $in: members.map(m => m.userId) } })).map(u => [u.id, u]));
    return members.map(m => {
      const u = users.get(m.userId)!;
      return { id: m.id, userId: m.userId, email: u.email, firstName: u.firstName, lastName: u.lastName };
    });
  }

  /** Whether the organization has a custom role of this name (a member's role is set only to one that exists). */
  async exists(roleName: string): Promise<boolean> {
    return (await this.em.count(CustomRole, { organizationId: this.organizationId, role: roleName })) > 0;
  }

  async #memberCounts(): Promise<Map<string, number>> {
    const rows = await this.em.getConnection().execute<{ role: string; n: string }[]>('select role, count(*) as n from members where organization_id = ? group by role', [this.organizationId]);
    return new Map(rows.map(r => [r.role, Number(r.n)]));
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The caller's organization's custom roles; from the custom-role plugin. */
    customRoles: CustomRoles;
  }
}
