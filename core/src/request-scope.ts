// What a request's own service starts from. A plugin registers it `asClass(X).scoped()`: the
// container makes one per request, with the request's scope, so the service reads the caller, their
// organization and the request's transaction from it instead of taking them as arguments — a
// handler calls it with the input alone, and nothing can pass it another organization's id.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Cradle } from './container.ts';
import { unauthorized } from './errors.ts';
import type { Principal, Role } from './procedure.ts';

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

  /** Who asks, as the rules of sharing read it (an owner or admin, or a member and who they are). */
  protected get caller(): { userId: string; role: Role } {
    const { userId, role } = this.principal;
    return { userId, role };
  }
}
