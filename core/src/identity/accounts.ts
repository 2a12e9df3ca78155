// What the kernel knows of accounts besides their credentials: whether the first admin exists (the
// setup token), who the instance owner is, and who the instance operators are (this machine, its
// engine, swarm and proxy are theirs: docs/security.md). Managing accounts and organizations is the
// auth, user and organization plugins' work.
import type { Principal } from '../procedure.ts';
import { Member } from './entities.ts';
import { IdentityStore } from './shared.ts';

export class AccountService extends IdentityStore {
  /** The instance's organization once known: the first admin's never changes (it cannot be deleted). */
  #instanceOrganization: string | undefined;

  /** true once the first admin exists (an organization has an owner). */
  async ownerExists(): Promise<boolean> {
    return (await this.em().count(Member, { role: 'owner' })) > 0;
  }

  /** True for the instance owner: the first admin, owner of the first organization (later owners only created theirs). */
  async isInstanceOwner(userId: string): Promise<boolean> {
    const first = await this.#firstOwner();
    return first?.userId === userId;
  }

  /** The instance's organization: the first admin's (null before the first admin exists). */
  async instanceOrganizationId(): Promise<string | null> {
    if (this.#instanceOrganization) return this.#instanceOrganization;
    const first = await this.#firstOwner();
    if (first) this.#instanceOrganization = first.organizationId;
    return first?.organizationId ?? null;
  }

  /**
   * True for an instance operator: the owner or an admin of the instance's organization, acting in
   * it (a single-organization install keeps the peer's rule, where admins may do what owners do).
   */
  async isInstanceOperator(principal: Pick<Principal, 'organizationId' | 'role'>): Promise<boolean> {
    if (principal.role === 'member') return false;
    return principal.organizationId === (await this.instanceOrganizationId());
  }

  async #firstOwner() {
    const [first] = await this.em().find(Member, { role: 'owner' }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 1 });
    return first;
  }
}

declare module '../container.ts' {
  interface Cradle {
    /** Whether the first admin exists, who the instance owner is (the user and organization plugins manage accounts). */
    accounts: AccountService;
  }
}
