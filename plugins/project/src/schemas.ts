// What project.* takes and answers. Field names and constraints follow the peer's API.
import { Type, schema, EnvironmentFields, EnvironmentView, ProjectFields, ProjectTag, type Static, type TSchema } from '@berth/core';

const { Nullable, NonEmpty, Paging } = schema;

export { EnvironmentView, ProjectFields };

/** A project with its environments (whose workload lists are the registered kinds') and its tags. */
export const projectView = (environment: TSchema) =>
  Type.Object({
    ...ProjectFields.properties,
    environments: Type.Array(environment),
    projectTags: Type.Array(ProjectTag, { description: "the project's tags, by name (none while the tag plugin is off)" }),
  });
const ProjectView = projectView(EnvironmentView);
export type ProjectView = Static<typeof ProjectView> & { environments: EnvironmentView[] };

const Name = () => NonEmpty({ maxLength: 255 });
const ProjectId = () => NonEmpty({ description: 'the project' });

export const CreateInput = Type.Object({ name: Name(), description: Type.Optional(Nullable(Type.String())), env: Type.Optional(Type.String()) });
export type CreateInput = Static<typeof CreateInput>;

/** project.create: the project and its default environment, as stored. */
export const Created = Type.Object({ project: ProjectFields, environment: EnvironmentFields });

export const ProjectIdInput = Type.Object({ projectId: ProjectId() });

export const UpdateInput = Type.Object({ projectId: ProjectId(), name: Type.Optional(Name()), description: Type.Optional(Nullable(Type.String())), env: Type.Optional(Type.String()) });
export type UpdateInput = Static<typeof UpdateInput>;

/** project.duplicate's input; selectedServices name workloads by the registered kinds' wire names. */
export const duplicateInput = (kinds: string[]) =>
  Type.Object({
    sourceEnvironmentId: NonEmpty({ description: 'an environment of the project to copy' }),
    name: Name(),
    description: Type.Optional(Type.String()),
    includeServices: Type.Optional(Type.Boolean({ default: true })),
    selectedServices: Type.Optional(Type.Array(Type.Object({ id: Type.String(), type: Type.Enum(kinds) }))),
    duplicateInSameProject: Type.Optional(Type.Boolean({ default: false, description: 'add a copy of the environment to its own project instead of a new project' })),
  });
export type DuplicateInput = Static<ReturnType<typeof duplicateInput>>;

export const SearchInput = Type.Object({
  q: Type.Optional(Type.String({ description: 'matches name or description (case-insensitive)' })),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  ...Paging,
});
export type SearchInput = Static<typeof SearchInput>;

export const SearchResult = Type.Object({ items: Type.Array(ProjectFields), total: Type.Integer({ minimum: 0 }) });
export type SearchResult = Static<typeof SearchResult>;
