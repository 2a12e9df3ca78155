// What the kernel knows of accounts besides their credentials: whether the first admin exists (the
// setup token) and who the instance owner is (several plugins keep things to the owner alone).
// Managing accounts and organizations is the auth, user and organization plugins' work.
import { Member } from './entities.ts';
import { IdentityStore } from './shared.ts';

export class AccountService extends IdentityStore {
  /** true once the first admin exists (an organization has an owner). */
  async ownerExists(): Promise<boolean> {
    return (await this.em().count(Member, { role: 'owner' })) > 0;
  }

  /** True for the instance owner: the first admin, owner of the first organization (later owners only created theirs). */
  async isInstanceOwner(userId: string): Promise<boolean> {
    const [first] = await this.em().find(Member, { role: 'owner' }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 1 });
    return first?.userId === userId;
  }
}
