// What mounts.* takes and answers. Field names follow the peer's API; the kinds a mount may
// belong to, and the peer's `<kind>Id` owner fields, are those of the registered kinds that
// support mounts (made once every plugin is set up). The per-type rules (which of hostPath,
// volumeName, filePath/content a type needs, and the shape of every path) are checked by the
// service on the record as it will be stored, see paths.ts.
import { Type, schema, type Static, type TSchema } from '@berth/core';
import { DENIED_HOST_PATHS, DENIED_HOST_TREES } from './paths.ts';

const { Nullable, NonEmpty } = schema;

export const MountType = Type.Enum(['bind', 'volume', 'file']);

const PathField = (description: string) => Type.Optional(Nullable(Type.String({ description })));
const hostPath = () =>
  PathField(
    `bind: the absolute path on the host (letters, digits, ".", "_", "-", "/"; no "." or ".." segments); never within ${DENIED_HOST_TREES.join(', ')} or Berth's data directory, nor ${DENIED_HOST_PATHS.join(', ')} whole`,
  );
const volumeName = () => PathField("volume: the named volume ([a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}, not berth-*); one organization's volumes are never another's");
const filePath = () => PathField('file: the file\'s path relative to the workload\'s files directory (no "." or ".." segments); default: mountPath without its leading "/"');
const content = () => PathField("file: the file's content (may be empty)");
const mountPath = () => NonEmpty({ maxLength: 4096, description: 'the absolute path inside the container (no ".." segments)' });

/** The kinds mounts may belong to: wire name and id field. */
export interface MountOwnerKind {
  kind: string;
  idField: string;
}

const fieldsOf = (kinds: MountOwnerKind[], field: () => TSchema) => Object.fromEntries(kinds.map(k => [k.idField, field()]));

/** The peer's mount owner fields of kinds no plugin serves yet (always null until their kind registers). */
export const peerOwnerFields = ['composeId', 'libsqlId'];
/** The owner fields a mount answers: the registered kinds', then the peer's others. */
export const ownerFieldsOf = (kinds: MountOwnerKind[]) => [...kinds.map(k => k.idField), ...peerOwnerFields.filter(f => !kinds.some(k => k.idField === f))];

export function mountSchemas(kinds: MountOwnerKind[]) {
  const names = kinds.map(k => k.kind);
  const ServiceType = Type.Enum(names);
  const CreateInput = Type.Object({
    type: MountType,
    hostPath: hostPath(),
    volumeName: volumeName(),
    content: content(),
    filePath: filePath(),
    mountPath: mountPath(),
    serviceType: Type.Optional(Type.Enum(names, names.length ? { default: names.includes('application') ? 'application' : names[0] } : {})), // kind-names: the peer's default serviceType, not the kind that registered first
    serviceId: NonEmpty({ description: `the workload the mount belongs to (of that serviceType: ${names.join(', ')})` }),
  });
  const UpdateInput = Type.Object({
    mountId: NonEmpty(),
    type: Type.Optional(MountType),
    hostPath: hostPath(),
    volumeName: volumeName(),
    filePath: filePath(),
    content: content(),
    serviceType: Type.Optional(ServiceType),
    mountPath: Type.Optional(mountPath()),
    ...fieldsOf(kinds, () => Type.Optional(Nullable(Type.String()))),
  });
  /** A stored mount, as every operation answers it (file content in plain text). */
  const MountView = Type.Object({
    mountId: Type.String(),
    type: MountType,
    hostPath: Nullable(Type.String()),
    volumeName: Nullable(Type.String()),
    filePath: Nullable(Type.String()),
    content: Nullable(Type.String()),
    mountPath: Type.String(),
    serviceType: ServiceType,
    ...Object.fromEntries(ownerFieldsOf(kinds).map(f => [f, Nullable(Type.String())])),
  });
  const ServiceInput = Type.Object({ serviceType: ServiceType, serviceId: NonEmpty() });
  return { CreateInput, UpdateInput, MountView, ServiceInput };
}

/** A mount as the API answers it. */
export type MountView = Static<ReturnType<typeof mountSchemas>['MountView']>;

export interface CreateInput {
  type: 'bind' | 'volume' | 'file';
  hostPath?: string | null;
  volumeName?: string | null;
  content?: string | null;
  filePath?: string | null;
  mountPath: string;
  serviceType?: string;
  serviceId: string;
}

export interface UpdateInput extends Partial<Omit<CreateInput, 'serviceId'>> {
  mountId: string;
  /** The `<kind>Id` owner fields. */
  [ownerField: string]: unknown;
}

export const MountIdInput = Type.Object({ mountId: NonEmpty() });
export const ApplicationIdInput = Type.Object({ applicationId: NonEmpty() });

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
