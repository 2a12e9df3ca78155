// port.* — published ports of the caller's organization's applications.
import { router, type ProcedureContext } from '@berth/core';
import type { PortService } from './service.ts';
import { CreateInput, PortIdInput, PortView, UpdateInput } from './schemas.ts';

const port = router('port');
const scope = (ctx: ProcedureContext) => ({ organizationId: ctx.principal.organizationId, em: ctx.cradle.em });

export const portProcedures = (ports: PortService) => [
  port.mutation('create', {
    summary: 'Publish a port of an application (taken at its next deployment); CONFLICT when the host already publishes it',
    input: CreateInput,
    output: PortView,
    handler(input, ctx) {
      const { organizationId, em } = scope(ctx);
      return ports.create(input, organizationId, em);
    },
  }),
  port.query('one', {
    summary: 'A published port of the organization',
    input: PortIdInput,
    output: PortView,
    handler({ portId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return ports.one(portId, organizationId, em);
    },
  }),
  port.mutation('update', {
    summary: 'Change a published port; the result must still be free on the host',
    input: UpdateInput,
    output: PortView,
    handler(input, ctx) {
      const { organizationId, em } = scope(ctx);
      return ports.update(input, organizationId, em);
    },
  }),
  port.mutation('delete', {
    summary: 'Stop publishing a port (at the next deployment); answers it as it was',
    input: PortIdInput,
    output: PortView,
    handler({ portId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return ports.remove(portId, organizationId, em);
    },
  }),
];
