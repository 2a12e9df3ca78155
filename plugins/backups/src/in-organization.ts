// The handlers of destination.*, backup.* and volumeBackups.* all act in the caller's
// organization, in the request's unit of work: one adapter instead of the same lines in each.
import type { EntityManager, ProcedureContext } from '@berth/core';

/** A procedure handler calling `fn` with the input, the caller's organization and the request's entity manager. */
export const inOrganization = <I>(fn: (input: I, organizationId: string, em: EntityManager) => unknown) =>
  (input: I, ctx: ProcedureContext) => fn(input, ctx.principal.organizationId, ctx.cradle.em as EntityManager) as never;
