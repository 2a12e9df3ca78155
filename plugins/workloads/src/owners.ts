// Berth owns what it creates on a host: every engine object it makes (service, data volume,
// image tag, the platform network) carries labels naming its record and organization, and
// every call on an existing object first checks that the labels name the record the call is
// for. A name taken on the host by anything else is refused with 409 and never touched.
import { conflict } from '@berth/core';
import { ID_LABEL, KIND_LABEL, ORGANIZATION_LABEL } from '@berth/plugin-hosts';

export { ID_LABEL, KIND_LABEL, ORGANIZATION_LABEL };

/** The record an engine object belongs to. */
export interface Owner {
  kind: string;
  id: string;
  organizationId: string;
}

/** The labels naming the owner, for every engine object Berth creates for a record. */
export function ownerLabels(owner: Owner): Record<string, string> {
  return { [KIND_LABEL]: owner.kind, [ID_LABEL]: owner.id, [ORGANIZATION_LABEL]: owner.organizationId };
}

/** True when the labels say the object is Berth's for the record with this id. */
export function ownedBy(labels: Record<string, string> | null | undefined, id: string): boolean {
  return Boolean(id) && labels?.[ID_LABEL] === id;
}

/** The 409 for a name taken on the host by something that is not Berth's for this record. */
export function notOurs(what: 'service' | 'volume', name: string): Error {
  return conflict(`a ${what} named ${name} exists on this host and is not Berth's for this record`);
}

/** Refuses (409) an existing object whose labels do not name the record `id`. */
export function assertOwned(what: 'service' | 'volume', name: string, labels: Record<string, string> | null | undefined, id: string): void {
  if (!ownedBy(labels, id)) throw notOurs(what, name);
}
