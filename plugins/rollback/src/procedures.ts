// rollback.* — the peer's two procedures on the kept releases of an application: roll back to one
// (a deployment like any other: queued, logged, its events sent) and delete one, both needing the
// peer's deployment.create on the application the release belongs to; and Berth's rollback.one.
import { DEPLOYMENT_ID_HEADER, router } from '@berth/core';
import { RollbackIdInput, RollbackView } from './schemas.ts';

const rollback = router('rollback', 'organization');

export const rollbackProcedures = () => [
  rollback.mutation('rollback', {
    permission: 'deployment.create',
    summary: `Roll an application back to a kept release: a deployment (action rollback) rolls the release's image, env and settings out again without a build; answers the release, the queued deployment's id is in the ${DEPLOYMENT_ID_HEADER} response header`,
    input: RollbackIdInput,
    output: RollbackView,
    headers: { [DEPLOYMENT_ID_HEADER]: 'the deployment this rollback queued (follow it with deployment.one and deployment.readLogs)' },
    handler: ({ rollbackId }, ctx) => ctx.cradle.rollbackRequests.rollback(rollbackId, (name, value) => ctx.setHeader(name, value)),
  }),
  rollback.query('one', {
    permission: 'deployment.read',
    summary: "A kept release of the organization's (Berth's addition; deployment.allByType answers each deployment's beside it)",
    input: RollbackIdInput,
    output: RollbackView,
    handler: ({ rollbackId }, ctx) => ctx.cradle.rollbackRequests.one(rollbackId),
  }),
  rollback.mutation('delete', {
    permission: 'deployment.create',
    summary: 'Delete a kept release and its rollback tag (an image a service still runs stays); answers it as it was',
    input: RollbackIdInput,
    output: RollbackView,
    handler: ({ rollbackId }, ctx) => ctx.cradle.rollbackRequests.remove(rollbackId),
  }),
];
