// Records a member is not given one by one — a domain, a mount, a backup, a deployment — belong to
// one that is (a service, an environment, a project). A plugin declares, for the input field naming
// such a record (`domainId`), how to find its owner (`berth.recordOwners`); the transport checks the
// owner against the records a member was given, as it checks `applicationId` itself
// (transport/permission-check.ts).
import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RecordKind } from './permissions.ts';

/** A record a member is given one by one: its kind and id. */
export interface RecordRef {
  kind: RecordKind;
  id: string;
}

/** What an owner lookup may use: the caller's organization, and an entity manager of its own. */
export interface OwnerLookup {
  /** The caller's organization: a record of another one is no record (null). */
  readonly organizationId: string;
  /** An entity manager of the lookup's own: the handler's unit of work is left as it was. */
  readonly em: EntityManager;
  /** The owner of another record by the field naming it (a deployment's backup, say): a field of a record given one by one is its own owner; an unknown field has none. */
  ownerOf(field: string, id: string): Promise<RecordRef | null>;
}

/** How the transport finds the owner of the record an input field names. */
export interface RecordOwner {
  /** The record as its handler's 404 names it ("Domain": "Domain not found"), so a member cannot tell a record not given from a record of another organization. */
  what: string;
  /**
   * The record the one with this id belongs to; null when the organization has no such record (its
   * handler answers as for any unknown id) or when nothing given one by one owns it.
   */
  owner(id: string, lookup: OwnerLookup): Promise<RecordRef | null>;
}

/**
 * The owner a record keeps in one of its columns (a service's id, mostly): the row of `entity` whose
 * `idField` is the id, in the caller's organization (the entity's `organizationId`).
 */
export function ownerColumn<E extends object>(entity: EntityName<E>, idField: keyof E & string, column: keyof E & string, kind: RecordKind = 'services'): RecordOwner['owner'] {
  return async (id, { em, organizationId }) => {
    const row = await em.findOne<E>(entity, { [idField]: id, organizationId } as FilterQuery<NoInfer<E>>);
    const owner = (row as Record<string, unknown> | null)?.[column];
    return typeof owner === 'string' && owner !== '' ? { kind, id: owner } : null;
  };
}
