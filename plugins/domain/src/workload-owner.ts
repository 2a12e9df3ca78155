// The workload a domain, redirect or basic-auth user belongs to, named on the wire by its kind's
// id field (applicationId, composeId); only kinds whose capabilities include domains take them.
import { invalidField, notFound, optionalService, type Cradle, type EntityManager } from '@berth/core';
import type { WorkloadRef } from '@berth/plugin-workloads';

export class WorkloadOwners {
  readonly #cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  #kinds() {
    return this.#cradle().workloads.supporting('domains');
  }

  /** The kind whose id field is `idField`, if one that takes domains is registered. */
  kindByIdField(idField: string) {
    return this.#kinds().find(k => k.idField === idField);
  }

  /** The workload named by whichever id field the input sets; NOT_FOUND when it is not the organization's. */
  async fromInput(input: Record<string, unknown>, organizationId: string, em: EntityManager): Promise<WorkloadRef> {
    const kinds = this.#kinds();
    const given = kinds.filter(k => typeof input[k.idField] === 'string' && input[k.idField] !== '');
    if (given.length > 1) throw invalidField(given[1]!.idField, `give one of ${given.map(k => k.idField).join(', ')}, not both`);
    const kind = given[0];
    if (!kind) {
      const unserved = ['applicationId', 'composeId'].find(f => typeof input[f] === 'string' && input[f] !== '');
      if (unserved) throw notFound(`${unserved.replace(/Id$/, '')} (no workload kind with ${unserved} takes domains here)`);
      const first = kinds.find(k => k.kind === 'application') ?? kinds[0]; // kind-names: the peer names applicationId first, not the kind that registered first
      throw invalidField(first?.idField ?? 'applicationId', `the workload the record belongs to is required (${kinds.map(k => k.idField).join(' or ')})`);
    }
    return this.#cradle().workloads.owner(kind.kind, input[kind.idField] as string, organizationId, em);
  }

  /** The peer's join of a record's application (applicationId, appName, name); null when a workload of another kind owns it. */
  application(workload: WorkloadRef | null): { applicationId: string; appName: string; name: string } | null {
    return this.#joined(workload, 'applicationId') as { applicationId: string; appName: string; name: string } | null;
  }

  /** The peer's join of a record's compose stack (composeId, appName, name); null when a workload of another kind owns it. */
  compose(workload: WorkloadRef | null): { composeId: string; appName: string; name: string } | null {
    return this.#joined(workload, 'composeId') as { composeId: string; appName: string; name: string } | null;
  }

  /** The owning workload as `{ <idField>, appName, name }` when it is of the kind with that id field, else null. */
  #joined(workload: WorkloadRef | null, idField: string): Record<string, string> | null {
    const kind = this.kindByIdField(idField);
    return workload && kind?.kind === workload.kind ? { [idField]: workload.id, appName: workload.appName, name: workload.name } : null;
  }

  /** The peer's owner fields of a stored record: every kind's id field, set for its own kind. */
  idFields(serviceType: string, serviceId: string, fields: string[]): Record<string, string | null> {
    const own = this.#cradle().workloads.kind(serviceType)?.idField;
    return Object.fromEntries(fields.map(f => [f, f === own ? serviceId : null]));
  }
}
