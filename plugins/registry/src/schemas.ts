// What registry.* takes and answers. Field names follow the peer's API (its current router, with
// serverId and testRegistryById, and the spec's older variant: the union is accepted). No answer
// carries the password.
import { Type, schema, type Static } from '@berth/core';

const { Nullable, NonEmpty, Timestamp } = schema;

/** host[:port] only ("" is Docker Hub): it becomes part of image references. */
export const RegistryUrl = () =>
  Type.String({ maxLength: 255, pattern: '^$|^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?(:[0-9]{1,5})?$', description: 'host[:port] of the registry, no scheme ("" is Docker Hub)' });
/** Path components of an image repository ("team/apps"); "" or null is none. */
export const ImagePrefix = () =>
  Nullable(Type.String({ maxLength: 200, pattern: '^$|^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$', description: 'repository path before the image name, e.g. "team/apps"' }));
export const RegistryType = () => Type.Union([Type.Literal('selfHosted'), Type.Literal('cloud')]);
const Username = () => NonEmpty({ maxLength: 255, pattern: '\\S' });
const Password = () => NonEmpty({ maxLength: 4096 });
const ServerId = () => Type.Optional(Type.String({ maxLength: 255, description: 'the server whose engine logs in, pushes and pulls; absent or "none": this machine' }));

export const CreateInput = Type.Object({
  registryName: NonEmpty({ maxLength: 255 }),
  username: Username(),
  password: Password(),
  registryUrl: RegistryUrl(),
  registryType: RegistryType(),
  imagePrefix: Type.Optional(ImagePrefix()),
  serverId: ServerId(),
});
export type CreateInput = Static<typeof CreateInput>;

export const RegistryIdInput = Type.Object({ registryId: NonEmpty({ maxLength: 255 }) });

export const UpdateInput = Type.Object({
  registryId: NonEmpty({ maxLength: 255 }),
  registryName: Type.Optional(NonEmpty({ maxLength: 255 })),
  imagePrefix: Type.Optional(ImagePrefix()),
  username: Type.Optional(Username()),
  password: Type.Optional(Password()),
  registryUrl: Type.Optional(RegistryUrl()),
  createdAt: Type.Optional(Type.String({ description: 'accepted and ignored: the record keeps its creation time' })),
  registryType: Type.Optional(RegistryType()),
  organizationId: Type.Optional(Type.String({ description: 'accepted and ignored: a registry stays in its organization' })),
  adminId: Type.Optional(Type.String({ description: 'older variant; accepted and ignored' })),
  serverId: ServerId(),
});
export type UpdateInput = Static<typeof UpdateInput>;

/** The fields of a registry as create takes them; its name is optional (nothing is stored). */
export const TestInput = Type.Object({ ...CreateInput.properties, registryName: Type.Optional(NonEmpty({ maxLength: 255 })) });
export type TestInput = Static<typeof TestInput>;

/** The spec's fields (each required, at least one character), and the server the registry runs on. */
export const EnableSelfHostedInput = Type.Object({
  registryUrl: Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?(:[0-9]{1,5})?$',
    description: "host[:port] the registry is reached at through the proxy (the port, when given, is the proxy's https port); it must resolve to the manager",
  }),
  username: Username(),
  password: Password(),
  serverId: Type.Optional(Type.String({ maxLength: 255, description: 'the server (a swarm manager) the registry runs on; absent or "none": this machine' })),
});
export type EnableSelfHostedInput = Static<typeof EnableSelfHostedInput>;

export const TestByIdInput = Type.Object({ registryId: NonEmpty({ maxLength: 255 }), serverId: ServerId() });
export type TestByIdInput = Static<typeof TestByIdInput>;

/** A stored registry as every read answers it: without its password. */
export const RegistryView = Type.Object({
  registryId: Type.String(),
  registryName: Type.String(),
  imagePrefix: Nullable(Type.String()),
  username: Type.String(),
  registryUrl: Type.String(),
  createdAt: Timestamp(),
  registryType: RegistryType(),
  organizationId: Type.String(),
});
export type RegistryView = Static<typeof RegistryView>;
