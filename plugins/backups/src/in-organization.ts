// The handlers of destination.*, backup.* and volumeBackups.* all act in the caller's
// organization, in the request's unit of work: one adapter instead of the same lines in each.
import type { EntityManager, Principal, ProcedureContext } from '@berth/core';

/** A procedure handler calling `fn` with the input, the caller's organization and the request's entity manager. */
export const inOrganization =
  <I>(fn: (input: I, organizationId: string, em: EntityManager) => unknown) =>
  (input: I, ctx: ProcedureContext) =>
    fn(input, ctx.principal.organizationId, ctx.cradle.em as EntityManager) as never; // cast: the output schema, not fn, types the answer

/** The same, for handlers that need the caller (their organization is `principal.organizationId`). */
export const asCaller =
  <I>(fn: (input: I, principal: Principal, em: EntityManager) => unknown) =>
  (input: I, ctx: ProcedureContext) =>
    fn(input, ctx.principal, ctx.cradle.em as EntityManager) as never; // cast: as above
