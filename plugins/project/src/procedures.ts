// project.* — the caller's organization's projects. The environment plugin provides
// `environments`; it registers after this plugin, so projectRequests resolves it per request.
import { Type, router, type TSchema } from '@berth/core';
import { forPermissions, homeStats, HomeStats, permissionsView } from './overview.ts';
import { Created, CreateInput, duplicateInput, ProjectFields, ProjectIdInput, projectView, SearchInput, SearchResult, UpdateInput } from './schemas.ts';

const project = router('project', 'organization');

/** What the procedures' schemas derive from: the environment view and the workload kinds (both from other plugins). */
export interface Derived {
  environmentView: () => TSchema;
  kinds: () => string[];
  /** The environment lists of the database kinds (their databases are counted together by homeStats). */
  databaseLists: () => Set<string>;
}

/** Made once every plugin is set up: a project lists its environments with the registered kinds' workloads. */
export const projectProcedures = (derived: Derived) => () => {
  const environment = derived.environmentView();
  const ProjectView = projectView(environment);
  const DuplicateInput = duplicateInput(derived.kinds());
  return [
    project.mutation('create', {
      permission: 'project.create',
      summary: 'Create a project with its default environment "production"',
      input: CreateInput,
      output: Created,
      handler: (input, ctx) => ctx.cradle.projectRequests.create(input),
    }),
    project.query('one', {
      permission: 'member',
      summary: 'A project with its environments and their workloads',
      input: ProjectIdInput,
      output: ProjectView,
      handler: ({ projectId }, ctx) => ctx.cradle.projectRequests.one(projectId),
    }),
    project.query('all', {
      permission: 'member',
      summary: 'Every project of the organization, newest first, with its environments and their workloads',
      input: Type.Object({}),
      output: Type.Array(ProjectView),
      handler: (_input, ctx) => ctx.cradle.projectRequests.all(),
    }),
    project.query('allForPermissions', {
      permission: 'member.update',
      summary: "Every project of the organization, newest first, with its environments and each workload's id, names, status and server: what a member's access is granted from",
      input: Type.Object({}),
      output: permissionsView(environment),
      handler: async (_input, ctx) => forPermissions(await ctx.cradle.projectRequests.all(), environment),
    }),
    project.query('homeStats', {
      permission: 'member',
      summary: 'How many projects, environments, applications, compose stacks and databases the organization has, and how many of its workloads run (done), failed (error) or are idle',
      input: Type.Object({}),
      output: HomeStats,
      handler: async (_input, ctx) => homeStats(await ctx.cradle.projectRequests.all(), environment, derived.databaseLists()),
    }),
    project.mutation('update', {
      permission: 'projectEnvVars.write',
      summary: "Change a project's name, description or environment variables",
      input: UpdateInput,
      output: ProjectFields,
      handler: (input, ctx) => ctx.cradle.projectRequests.update(input),
    }),
    project.mutation('remove', {
      permission: 'project.delete',
      summary: 'Delete a project with its environments; answers the deleted project',
      input: ProjectIdInput,
      output: ProjectFields,
      handler: ({ projectId }, ctx) => ctx.cradle.projectRequests.remove(projectId),
    }),
    project.mutation('duplicate', {
      permission: 'project.create',
      summary: 'Copy the project of an environment under a new name, or (duplicateInSameProject) add a copy of the environment to its project',
      input: DuplicateInput,
      output: ProjectView,
      async handler(input, ctx) {
        const projects = ctx.cradle.projectRequests;
        if (!input.duplicateInSameProject) return projects.duplicate(input);
        // Copying one environment is the environment plugin's own operation; the directory
        // contract has no member for it, so go through its registered procedure.
        const duplicateEnvironment = ctx.cradle.registry.get('environment.duplicate');
        if (!duplicateEnvironment) throw new Error("project.duplicate needs the environment plugin's environment.duplicate");
        const source = await projects.environment(input.sourceEnvironmentId);
        await duplicateEnvironment.handler({ environmentId: source.environmentId, name: input.name, description: input.description }, ctx);
        return projects.one(source.projectId);
      },
    }),
    project.query('search', {
      permission: 'member',
      summary: 'Projects whose name or description contains the given text (case-insensitive), newest first, paged',
      input: SearchInput,
      output: SearchResult,
      handler: (input, ctx) => ctx.cradle.projectRequests.search(input),
    }),
  ];
};
