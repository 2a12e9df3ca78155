// What a request's own service starts from. A plugin registers it `asClass(X).scoped()`: the
// container makes one per request, with the request's scope, so the service reads the caller, their
// organization and the request's transaction from it instead of taking them as arguments — a
// handler calls it with the input alone, and nothing can pass it another organization's id.
import type { EntityName, FilterQuery, Loaded, ObjectQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Cradle } from './container.ts';
import { notFound, unauthorized } from './errors.ts';
import type { Principal, Role } from './procedure.ts';
import type { RecordKind } from './permissions.ts';
import { Member } from './identity/entities.ts';

export abstract class RequestScope {
  /** The request's scope: its principal and em, and every service. */
  protected readonly cradle: Cradle;

  constructor(cradle: Cradle) {
    this.cradle = cradle;
  }

  /** The caller (UNAUTHORIZED outside a signed-in request: a public procedure without credentials). */
  protected get principal(): Principal {
    const principal = this.cradle.principal;
    if (!principal) throw unauthorized('Authorization not provided');
    return principal;
  }

  /** The organization every read and write of the request is confined to. */
  protected get organizationId(): string {
    return this.principal.organizationId;
  }

  /** The request's unit of work (its transaction). */
  protected get em(): EntityManager {
    return this.cradle.em;
  }

  /** The record `where` names if it is the caller's organization's, else NOT_FOUND naming `what` (see findOwned). */
  protected owned<E extends object>(entity: EntityName<E>, where: ObjectQuery<E>, what: string): Promise<Loaded<E>> {
    return findOwned(this.em, entity, where, this.organizationId, what);
  }

  /**
   * Gives the caller the record it just made when it is given records one by one (a member with
   * lists, as the peer adds a new project, environment or service to its creator's): written with
   * the request's next flush; the caller's next call sees it.
   */
  protected async grantCreated(kind: Exclude<RecordKind, 'servers' | 'gitProviders'>, id: string): Promise<void> {
    if (this.principal.grants.records === null) return;
    const member = await findOwned(this.em, Member, { userId: this.principal.userId }, this.organizationId, 'Member');
    const field = ({ projects: 'accessedProjects', environments: 'accessedEnvironments', services: 'accessedServices' } as const)[kind];
    if (!member[field].includes(id)) member[field] = [...member[field], id];
    this.cradle.sessions.invalidate();
  }

  /** Who asks, as the rules of sharing read it (an owner or admin, or a member and who they are). */
  protected get caller(): { userId: string; role: Role } {
    const { userId, role } = this.principal;
    return { userId, role };
  }
}

/**
 * The record `where` names if it belongs to the organization, else NOT_FOUND naming `what`. A record
 * of another organization is NOT_FOUND too, never FORBIDDEN, so ids cannot be probed.
 */
export async function findOwned<E extends object>(em: EntityManager, entity: EntityName<E>, where: ObjectQuery<E>, organizationId: string, what: string): Promise<Loaded<E>> {
  const row = await em.findOne<E>(entity, { ...where, organizationId } as FilterQuery<NoInfer<E>>);
  if (!row) throw notFound(what);
  return row;
}
