// What mounts.* takes and answers. Field names follow the peer's API; the per-type rules
// (which of hostPath, volumeName, filePath/content a type needs, and the shape of every path)
// are checked by the service on the record as it will be stored, see paths.ts.
import { Type, schema, type Static } from '@berth/core';
import { DENIED_HOST_PATHS, DENIED_HOST_TREES } from './paths.ts';
import { mountServiceTypes } from '@berth/plugin-workloads';

const { Nullable, NonEmpty } = schema;

export const MountType = Type.Enum(['bind', 'volume', 'file']);
export const ServiceType = Type.Enum([...mountServiceTypes]);

const PathField = (description: string) => Type.Optional(Nullable(Type.String({ description })));
const hostPath = () => PathField(`bind: the absolute path on the host (letters, digits, ".", "_", "-", "/"; no "." or ".." segments); never within ${DENIED_HOST_TREES.join(', ')} or Berth's data directory, nor ${DENIED_HOST_PATHS.join(', ')} whole`);
const volumeName = () => PathField('volume: the named volume ([a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}, not berth-*); one organization\'s volumes are never another\'s');
const filePath = () => PathField('file: the file\'s path relative to the workload\'s files directory (no "." or ".." segments); default: mountPath without its leading "/"');
const content = () => PathField('file: the file\'s content (may be empty)');
const mountPath = () => NonEmpty({ maxLength: 4096, description: 'the absolute path inside the container (no ".." segments)' });

export const CreateInput = Type.Object({
  type: MountType,
  hostPath: hostPath(),
  volumeName: volumeName(),
  content: content(),
  filePath: filePath(),
  mountPath: mountPath(),
  serviceType: Type.Optional(Type.Enum([...mountServiceTypes], { default: 'application' })),
  serviceId: NonEmpty({ description: 'the workload the mount belongs to (an application, compose stack or database of that serviceType)' }),
});
export type CreateInput = Static<typeof CreateInput>;

const ownerField = () => Type.Optional(Nullable(Type.String()));
export const UpdateInput = Type.Object({
  mountId: NonEmpty(),
  type: Type.Optional(MountType),
  hostPath: hostPath(),
  volumeName: volumeName(),
  filePath: filePath(),
  content: content(),
  serviceType: Type.Optional(ServiceType),
  mountPath: Type.Optional(mountPath()),
  applicationId: ownerField(),
  postgresId: ownerField(),
  mariadbId: ownerField(),
  mongoId: ownerField(),
  mysqlId: ownerField(),
  redisId: ownerField(),
  composeId: ownerField(),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const MountIdInput = Type.Object({ mountId: NonEmpty() });
export const ApplicationIdInput = Type.Object({ applicationId: NonEmpty() });
export const ServiceInput = Type.Object({ serviceType: ServiceType, serviceId: NonEmpty() });

/** A stored mount, as every operation answers it (the contract's MountRecord; file content in plain text). */
export const MountView = Type.Object({
  mountId: Type.String(),
  type: MountType,
  hostPath: Nullable(Type.String()),
  volumeName: Nullable(Type.String()),
  filePath: Nullable(Type.String()),
  content: Nullable(Type.String()),
  mountPath: Type.String(),
  serviceType: ServiceType,
  applicationId: Nullable(Type.String()),
  postgresId: Nullable(Type.String()),
  mariadbId: Nullable(Type.String()),
  mongoId: Nullable(Type.String()),
  mysqlId: Nullable(Type.String()),
  redisId: Nullable(Type.String()),
  composeId: Nullable(Type.String()),
});
export type MountView = Static<typeof MountView>;

/** A named volume mounted in the application's running container, as the engine reports it. */
export const ContainerVolume = Type.Object({
  Type: Type.String(),
  Name: Type.Optional(Type.String()),
  Source: Type.String(),
  Destination: Type.String(),
  Driver: Type.Optional(Type.String()),
  Mode: Type.String(),
  RW: Type.Boolean(),
  Propagation: Type.String(),
});
export type ContainerVolume = Static<typeof ContainerVolume>;
