// What the project and environment plugins offer the rest of the platform through the
// container. Every method is confined to one organization: a record of another one is
// NOT_FOUND, never FORBIDDEN, so ids cannot be probed.
import type { EntityManager } from '@mikro-orm/postgresql';
import Type, { type Static, type TSchema } from 'typebox';
import { Nullable, Timestamp } from '../schema.ts';

/** An environment as stored (the environment plugin owns it; project reads pass it through). */
export const EnvironmentFields = Type.Object({
  environmentId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  env: Type.String({ description: "environment variables shared by the environment's workloads" }),
  projectId: Type.String(),
  isDefault: Type.Boolean({ description: 'the project\'s "production" environment, which cannot be removed' }),
  createdAt: Timestamp(),
});
export type EnvironmentFields = Static<typeof EnvironmentFields>;

/** A project as stored (the project plugin owns it). */
export const ProjectFields = Type.Object({
  projectId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  env: Type.String({ description: "environment variables shared by the project's workloads" }),
  organizationId: Type.String(),
  createdAt: Timestamp(),
});
export type ProjectFields = Static<typeof ProjectFields>;

/** Where a workload lives, as its `one` answers it (the peer's `environment: { ..., project }`). */
export const Placement = Type.Object({ ...EnvironmentFields.properties, project: ProjectFields });
export type Placement = Static<typeof Placement>;

/** A list of what an environment holds, under a key a plugin registers, as the environment's schema knows it without the plugin. */
export const EnvironmentList = Type.Array(Type.Record(Type.String(), Type.Unknown()));
/** An environment with what it holds: one list per key that plugins register (environmentView adds the workload kinds' lists, with their item schemas). */
export const EnvironmentView = Type.Object({ ...EnvironmentFields.properties }, { additionalProperties: EnvironmentList });
export type EnvironmentView = Static<typeof EnvironmentView>;

export interface EnvironmentRef {
  environmentId: string;
  projectId: string;
  organizationId: string;
  name: string;
  isDefault: boolean;
}

/** Registered as `projects` by the project plugin. */
export interface ProjectDirectory {
  /** Throws NOT_FOUND unless the project exists in the organization. */
  assertInOrganization(projectId: string, organizationId: string, em: EntityManager): Promise<void>;
}

/** A tag of an organization, as tag.* answers it and a project's `projectTags` join it (the peer's tag row). */
export const TagFields = Type.Object({ tagId: Type.String(), name: Type.String(), color: Nullable(Type.String()), createdAt: Timestamp(), organizationId: Type.String() });
export type TagFields = Static<typeof TagFields>;

/** A tag on a project: the peer's project_tag row, with its tag. */
export const ProjectTag = Type.Object({ id: Type.String(), projectId: Type.String(), tagId: Type.String(), tag: TagFields });
export type ProjectTag = Static<typeof ProjectTag>;

/** Registered as `projectTags` by the tag plugin; without it a project lists no tags. */
export interface ProjectTagDirectory {
  /** The tags of each of the organization's projects given, grouped by projectId, by tag name. */
  forProjects(projectIds: string[], organizationId: string, em: EntityManager): Promise<Map<string, ProjectTag[]>>;
}

declare module '../container.ts' {
  interface Cradle {
    /** From the tag plugin. */
    projectTags: ProjectTagDirectory;
  }
}

/** Registered as `environments` by the environment plugin. */
export interface EnvironmentDirectory {
  /** The environment if it belongs to the organization; NOT_FOUND otherwise. */
  get(environmentId: string, organizationId: string, em: EntityManager): Promise<EnvironmentRef>;
  /** The project's default environment: where the older variant's `projectId` puts a workload. */
  defaultOf(projectId: string, organizationId: string, em: EntityManager): Promise<EnvironmentRef>;
  /** The environment with its project, every field of both, as a workload's `one` answers it; NOT_FOUND outside the organization. */
  placement(environmentId: string, organizationId: string, em: EntityManager): Promise<Placement>;
  /** The environment variables texts a workload's `${{project.KEY}}` and `${{environment.KEY}}` references read. */
  variables(environmentId: string, organizationId: string, em: EntityManager): Promise<{ project: string; environment: string }>;
  /** Adds the default environment ("production") of a new project to the unit of work (flushed by the caller). */
  createDefault(projectId: string, organizationId: string, em: EntityManager): EnvironmentRef;
  /** Every environment of the given projects with its workloads, grouped by projectId, default first. */
  listForProjects(projectIds: string[], organizationId: string, em: EntityManager): Promise<Map<string, Record<string, unknown>[]>>;
  /** The schema of an environment with its workloads, one list per registered kind (for answers that include environments). */
  viewSchema(): TSchema;
  /** Removes the workloads of every environment of the project through their kinds (before the project is deleted). */
  removeWorkloadsOf(projectId: string, organizationId: string, em: EntityManager): Promise<void>;
  /** Copies a project's environments (not their workloads) onto another project, in the unit of work. */
  copyEnvironments(fromProjectId: string, toProjectId: string, organizationId: string, em: EntityManager): Promise<void>;
}
