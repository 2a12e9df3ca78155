// What environment.* takes and answers. Field names and constraints follow the peer's API.
import { Type, schema, EnvironmentFields, EnvironmentView, type Static } from '@berth/core';

const { Nullable, NonEmpty, Timestamp, Paging } = schema;

export { EnvironmentFields, EnvironmentView };

const Name = () => NonEmpty({ maxLength: 255 });

export const CreateInput = Type.Object({ name: Name(), projectId: NonEmpty(), description: Type.Optional(Nullable(Type.String())) });
export type CreateInput = Static<typeof CreateInput>;

export const EnvironmentIdInput = Type.Object({ environmentId: NonEmpty() });
export const ProjectIdInput = Type.Object({ projectId: NonEmpty() });

export const UpdateInput = Type.Object({ environmentId: NonEmpty(), name: Type.Optional(Name()), description: Type.Optional(Nullable(Type.String())), env: Type.Optional(Type.String()) });
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
