// mounts.* — mounts of the caller's organization's workloads. Made once every plugin is set
// up: the kinds a mount may belong to are the registered kinds that support mounts.
import { Type, router } from '@berth/core';
import type { MountService } from './service.ts';
import { ApplicationIdInput, ContainerVolume, MountIdInput, mountSchemas, type CreateInput, type UpdateInput } from './schemas.ts';

const mounts = router('mounts', 'organization');

export const mountProcedures = (service: MountService) => () => {
  const { CreateInput: Create, UpdateInput: Update, MountView, ServiceInput } = mountSchemas(service.ownerKinds());
  return [
    mounts.mutation('create', {
      permission: 'volume.create',
      summary: 'Add a bind mount (hostPath), named volume (volumeName) or file mount (filePath and content) to a workload',
      description: "Bind mounts are for admins. A file mount's content is written under the workload's files directory when it deploys and mounted at mountPath.",
      input: Create,
      output: MountView,
      handler: (input, ctx) => ctx.cradle.mountRequests.create(input as CreateInput),
    }),
    mounts.query('one', {
      permission: 'volume.read',
      summary: 'A mount of the organization',
      input: MountIdInput,
      output: MountView,
      handler: ({ mountId }, ctx) => ctx.cradle.mountRequests.one(mountId),
    }),
    mounts.mutation('update', {
      permission: 'volume.create',
      summary: 'Change a mount; the result must still be a complete mount of its type',
      input: Update,
      output: MountView,
      handler: (input, ctx) => ctx.cradle.mountRequests.update(input as UpdateInput),
    }),
    mounts.mutation('remove', {
      permission: 'volume.delete',
      summary: 'Delete a mount; answers it as it was',
      input: MountIdInput,
      output: MountView,
      handler: ({ mountId }, ctx) => ctx.cradle.mountRequests.remove(mountId),
    }),
    mounts.query('listByServiceId', {
      permission: 'service.read',
      summary: 'The mounts of one workload, oldest first',
      input: ServiceInput,
      output: Type.Array(MountView),
      handler: ({ serviceType, serviceId }, ctx) => ctx.cradle.mountRequests.listByService(serviceType as string, serviceId as string),
    }),
    mounts.query('allNamedByApplicationId', {
      permission: 'volume.read',
      summary: "The named volumes mounted in the application's running container, as the engine reports them (none while it does not run)",
      input: ApplicationIdInput,
      output: Type.Array(ContainerVolume),
      handler: ({ applicationId }, ctx) => ctx.cradle.mountRequests.namedVolumesOf('applicationId', applicationId),
    }),
  ];
};
