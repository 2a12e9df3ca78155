// port.* — published ports of the caller's organization's applications.
import { Type, router } from '@berth/core';
import { CreateInput, PortIdInput, PortView, UpdateInput } from './schemas.ts';

const port = router('port', 'organization');

export const portProcedures = [
  port.mutation('create', {
    permission: 'service.create',
    summary: 'Publish a port of an application (taken at its next deployment); CONFLICT when the host already publishes it',
    input: CreateInput,
    output: PortView,
    handler: (input, ctx) => ctx.cradle.portRequests.create(input),
  }),
  port.query('one', {
    permission: 'service.read',
    summary: 'A published port of the organization',
    input: PortIdInput,
    output: Type.Object({ ...PortView.properties, application: Type.Object({ applicationId: Type.String() }) }),
    handler: async ({ portId }, ctx) => {
      const found = await ctx.cradle.portRequests.one(portId);
      // The peer answers the port with its application's id.
      return { ...found, application: { applicationId: found.applicationId } };
    },
  }),
  port.mutation('update', {
    permission: 'service.create',
    summary: 'Change a published port; the result must still be free on the host',
    input: UpdateInput,
    output: PortView,
    handler: (input, ctx) => ctx.cradle.portRequests.update(input),
  }),
  port.mutation('delete', {
    permission: 'service.delete',
    summary: 'Stop publishing a port (at the next deployment); answers it as it was',
    input: PortIdInput,
    output: PortView,
    handler: ({ portId }, ctx) => ctx.cradle.portRequests.remove(portId),
  }),
];
