// What environment.* takes and answers. Field names and constraints follow the peer's API.
import { Type, schema, workloadKeys, type Static, type WorkloadKey } from '@berth/core';

const { Nullable, NonEmpty, Timestamp, Paging } = schema;

/** An environment as stored (search lists these). */
export const EnvironmentFields = Type.Object({
  environmentId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  env: Type.String({ description: 'environment variables shared by the environment\'s workloads' }),
  projectId: Type.String(),
  isDefault: Type.Boolean({ description: 'the project\'s "production" environment, which cannot be removed' }),
  createdAt: Timestamp(),
});
export type EnvironmentFields = Static<typeof EnvironmentFields>;

const WorkloadList = () => Type.Array(Type.Record(Type.String(), Type.Unknown()));
const workloadLists = Object.fromEntries(workloadKeys.map(k => [k, WorkloadList()])) as { [K in WorkloadKey]: ReturnType<typeof WorkloadList> };

/** An environment with the workloads it holds, one list per kind. */
export const EnvironmentView = Type.Object({ ...EnvironmentFields.properties, ...workloadLists });
export type EnvironmentView = Static<typeof EnvironmentView>;

const Name = () => NonEmpty({ maxLength: 255 });

export const CreateInput = Type.Object({
  name: Name(),
  projectId: NonEmpty(),
  description: Type.Optional(Nullable(Type.String())),
});
export type CreateInput = Static<typeof CreateInput>;

export const EnvironmentIdInput = Type.Object({ environmentId: NonEmpty() });
export const ProjectIdInput = Type.Object({ projectId: NonEmpty() });

export const UpdateInput = Type.Object({
  environmentId: NonEmpty(),
  name: Type.Optional(Name()),
  description: Type.Optional(Nullable(Type.String())),
  env: Type.Optional(Type.String()),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const DuplicateInput = Type.Object({
  environmentId: NonEmpty({ description: 'the environment to copy (its env and description)' }),
  name: Name(),
  description: Type.Optional(Nullable(Type.String())),
});
export type DuplicateInput = Static<typeof DuplicateInput>;

export const SearchInput = Type.Object({
  q: Type.Optional(Type.String({ description: 'matches name or description (case-insensitive)' })),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  projectId: Type.Optional(Type.String()),
  ...Paging,
});
export type SearchInput = Static<typeof SearchInput>;

export const SearchResult = Type.Object({ items: Type.Array(EnvironmentFields), total: Type.Integer({ minimum: 0 }) });
export type SearchResult = Static<typeof SearchResult>;
