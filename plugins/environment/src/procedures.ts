// environment.* — environments of the caller's organization's projects.
import { Type, router, EnvironmentFields, ProjectFields } from '@berth/core';
import type { EnvironmentService } from './service.ts';
import { CreateInput, DuplicateInput, EnvironmentIdInput, ProjectIdInput, SearchInput, SearchResult, UpdateInput } from './schemas.ts';

const environment = router('environment', 'organization');

/** Made once every plugin is set up: an environment lists the registered kinds' workloads. */
export const environmentProcedures = (environments: EnvironmentService) => () => {
  const EnvironmentView = environments.viewSchema();
  // one and byProjectId carry the project too, as the peer's do.
  const WithProject = Type.Object({ ...EnvironmentView.properties, project: ProjectFields });
  return [
    environment.mutation('create', {
      permission: 'environment.create',
      summary: 'Add an environment to a project (names are unique within a project)',
      input: CreateInput,
      output: EnvironmentFields,
      handler: (input, ctx) => ctx.cradle.environmentRequests.create(input),
    }),
    environment.query('one', {
      permission: 'member',
      summary: 'An environment with its workloads',
      input: EnvironmentIdInput,
      output: WithProject,
      handler: ({ environmentId }, ctx) => ctx.cradle.environmentRequests.one(environmentId),
    }),
    environment.query('byProjectId', {
      permission: 'member',
      summary: 'The environments of a project, default first, with their workloads',
      input: ProjectIdInput,
      output: Type.Array(WithProject),
      handler: ({ projectId }, ctx) => ctx.cradle.environmentRequests.byProjectId(projectId),
    }),
    environment.mutation('remove', {
      permission: 'environment.delete',
      summary: "Delete an environment and its workloads (not the project's default one); answers it as it was",
      input: EnvironmentIdInput,
      output: EnvironmentFields,
      handler: ({ environmentId }, ctx) => ctx.cradle.environmentRequests.remove(environmentId),
    }),
    environment.mutation('update', {
      permission: 'environmentEnvVars.write',
      summary: "Change an environment's name, description or environment variables",
      input: UpdateInput,
      output: EnvironmentFields,
      handler: (input, ctx) => ctx.cradle.environmentRequests.update(input),
    }),
    environment.mutation('duplicate', {
      permission: 'environment.read',
      summary: 'A new environment in the same project with a copy of the environment variables',
      input: DuplicateInput,
      output: EnvironmentFields,
      handler: (input, ctx) => ctx.cradle.environmentRequests.duplicate(input),
    }),
    environment.query('search', {
      permission: 'member',
      summary: 'Environments whose name or description contains the given text (case-insensitive), newest first, paged',
      input: SearchInput,
      output: SearchResult,
      handler: (input, ctx) => ctx.cradle.environmentRequests.search(input),
    }),
  ];
};
