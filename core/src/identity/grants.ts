// A member's row as the credential check reads it, turned into the principal's role and grants.
import { builtInRoles, isPrivileged, MEMBER_BEFORE_ROLES, MEMBER_SWITCHES, type Grants, type MemberSwitch, type Statement } from '../permissions.ts';
import type { Role } from '../procedure.ts';

/** The member's columns (and their custom role's statement) next to the credential's. */
export interface MemberRow {
  id: string;
  user_id: string;
  organization_id: string;
  expires_at: Date | null;
  role: string;
  switches: string[];
  all_records: boolean;
  accessed_projects: string[];
  accessed_environments: string[];
  accessed_services: string[];
  accessed_git_providers: string[];
  accessed_servers: string[];
  /** The custom role's statement; null for a built-in role (or a custom role since removed). */
  permission: Record<string, string[]> | null;
}

/** The built-in role a member's rights start from: a custom role's holder is a member. */
export const builtInRole = (roleName: string): Role => (roleName === 'owner' || roleName === 'admin' ? roleName : 'member');

/** What the member may do: the role's statement, the switches (members only) and the records given. */
export function grantsOf(row: Omit<MemberRow, 'id' | 'user_id' | 'organization_id' | 'expires_at'>): Grants {
  const privileged = isPrivileged(row.role);
  const statement: Statement = row.role === 'member' && row.all_records ? MEMBER_BEFORE_ROLES : row.role in builtInRoles ? builtInRoles[row.role as Role] : (row.permission ?? {});
  const switches = new Set(row.role === 'member' ? row.switches.filter((s): s is MemberSwitch => (MEMBER_SWITCHES as string[]).includes(s)) : []);
  const records =
    privileged || row.all_records
      ? null
      : { projects: row.accessed_projects, environments: row.accessed_environments, services: row.accessed_services, gitProviders: row.accessed_git_providers, servers: row.accessed_servers };
  return { roleName: row.role, statement, switches, records };
}

/** A built-in role's grants over every record: for principals Berth makes itself (the operator command, tests). */
export const roleGrants = (role: Role): Grants =>
  grantsOf({ role, switches: [], all_records: true, accessed_projects: [], accessed_environments: [], accessed_services: [], accessed_git_providers: [], accessed_servers: [], permission: null });
