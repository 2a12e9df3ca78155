// A member's switches and records (user.assignPermissions), and what the caller may do
// (user.getPermissions). The transport reads them with every credential; a change reaches the
// member's next call (the kernel forgets the credentials it verified).
import { Member, MEMBER_SWITCHES, RequestScope, findOwned, resolvePermissions, type MemberSwitch, type Resource } from '@berth/core';

export interface AssignedGrants {
  /** The member's user id (the peer's `id`). */
  id: string;
  accessedProjects: string[];
  accessedEnvironments: string[];
  accessedServices: string[];
  accessedGitProviders: string[];
  accessedServers: string[];
  /** Berth's addition: every record of the organization, present and future (the lists are then kept but not read). */
  allRecords?: boolean;
  [name: string]: unknown;
}

export class MemberGrants extends RequestScope {
  /** Sets a member's switches and records; owners and admins hold everything whatever is stored. */
  async assign(input: AssignedGrants): Promise<null> {
    const member = await findOwned(this.em, Member, { userId: input.id }, this.organizationId, 'User');
    // An owner's or admin's are stored as the peer's are, and read for nothing: they may do everything.
    member.switches = MEMBER_SWITCHES.filter((name: MemberSwitch) => input[name] === true);
    member.accessedProjects = unique(input.accessedProjects);
    member.accessedEnvironments = unique(input.accessedEnvironments);
    member.accessedServices = unique(input.accessedServices);
    member.accessedGitProviders = unique(input.accessedGitProviders);
    member.accessedServers = unique(input.accessedServers);
    member.allRecords = input.allRecords ?? false;
    await this.em.flush();
    this.cradle.sessions.invalidate();
    return null;
  }

  /** Every resource and action, with whether the caller may (the peer's resolvePermissions). */
  mine(): Record<Resource, Record<string, boolean>> {
    return resolvePermissions(this.principal.grants);
  }
}

const unique = (ids: string[]) => [...new Set(ids)];

declare module '@berth/core' {
  interface Cradle {
    /** Members' permissions; from the user plugin. */
    memberGrants: MemberGrants;
  }
}
