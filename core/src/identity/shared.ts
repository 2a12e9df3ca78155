// What the identity services share: their common ground and the older variant's account view.
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../errors.ts';
import type { Cradle } from '../container.ts';
import { Member, User } from './entities.ts';
import { iso, type AuthUserView } from './views.ts';

export type UserRow = InstanceType<typeof User.class>;
export type MemberRow = InstanceType<typeof Member.class>;

export const DAY = 24 * 3600 * 1000;

/**
 * An identity service. `deps` is the container's cradle (PROXY mode), narrowed to what the
 * service uses besides `orm`; a dependency is looked up when it is used, not at construction.
 */
export abstract class IdentityStore<Uses extends keyof Cradle = never> {
  protected readonly deps: Pick<Cradle, 'orm' | Uses>;

  constructor(cradle: Pick<Cradle, 'orm' | Uses>) {
    this.deps = cradle;
  }

  /** A unit of work of its own for each operation. */
  protected em(): EntityManager {
    return this.deps.orm.em.fork() as EntityManager;
  }
}

/** An account as the older variant shows it, with its role in `organizationId` (none when null). */
export async function authUserView(em: EntityManager, userId: string, organizationId: string | null): Promise<AuthUserView> {
  const user = await em.findOne(User, { id: userId });
  if (!user) throw notFound('User');
  const member = organizationId ? await em.findOne(Member, { userId, organizationId }) : null;
  return toAuthUser(user, member);
}

const toAuthUser = (u: UserRow, m: MemberRow | null): AuthUserView => ({
  id: u.id,
  userId: u.id,
  email: u.email,
  rol: m && m.role !== 'member' ? 'admin' : 'user',
  image: u.image ?? null,
  secret: null,
  token: null,
  is2FAEnabled: u.twoFactorEnabled,
  organizationId: m?.organizationId ?? null,
  createdAt: iso(u.createdAt)!,
});
