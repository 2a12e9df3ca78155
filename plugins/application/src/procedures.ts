// application.* — every operation of both API variants and the peer's others, through the
// request's ApplicationRequests (requests.ts); runs (deploy, redeploy, reload, start, stop) go on
// the durable deploy queue and answer the peer's body, the queued deployment's id in a header (the
// kit's runProcedure); engine work happens in the deployer.
import { optionalService, Type, router, schema, type Cradle } from '@berth/core';
import { gitSourceCleared, newRefreshToken, relationSchemas, runProcedure } from '@berth/plugin-workloads';
import { KIND } from './service.ts';
import {
  ApplicationFields,
  applicationFound,
  applicationView,
  CreateInput,
  DeployInput,
  DropInput,
  IdInput,
  MoveInput,
  ReadLogsInput,
  ReloadInput,
  saveBuildTypeInput,
  SaveDockerInput,
  SaveEnvironmentInput,
  SaveGitInput,
  saveForgeInput,
  SearchInput,
  SearchResult,
  updateInput,
  type AllowedValues,
} from './schemas.ts';

const application = router('application', 'organization');

const Ok = schema.Ok;

/** Made once every plugin is set up: the relations' schemas are their plugins', the allowed build and source types the enabled providers'. */
export function applicationProcedures(allowed: AllowedValues, cradle: Cradle) {
  const relations = relationSchemas(cradle, optionalService(cradle, 'gitProviders'));
  // The peer answers `true` for every save*, update, markRunning, refreshToken and disconnectGitProvider.
  const save = (name: string, summary: string, input: Parameters<typeof application.mutation>[1]['input'], extra: (i: Record<string, unknown>) => Record<string, unknown> = () => ({})) =>
    application.mutation(name, {
      // Variables are their own permission (envVars); markRunning is a deployment's; every other save changes the service.
      permission: name === 'saveEnvironment' ? 'envVars.write' : name === 'markRunning' ? 'deployment.create' : 'service.create',
      summary: `${summary}; answers true`,
      input,
      output: Ok(),
      async handler(input: unknown, ctx) {
        const i = input as Record<string, unknown>;
        // What reaches the host is the operator's to grant (403 naming the field and the config key).
        await ctx.cradle.hostAccess.assertNetworks(ctx.principal, i.networkSwarm as { Target?: string }[] | null | undefined);
        await ctx.cradle.hostAccess.assertGitUrl(ctx.principal, i.customGitUrl as string | null | undefined);
        const changes = { ...i, ...extra(i) };
        await ctx.cradle.applicationRequests.change(i.applicationId as string, changes);
        // A linked repository gets its push webhook registered (and an unlinked one loses it).
        await optionalService(ctx.cradle, 'deployHooks')?.syncWebhook(KIND, i.applicationId as string, ctx.cradle.em);
        return true;
      },
    });
  // The peer answers true for deploy, redeploy and reload, and the record with its relations for start and stop.
  const run = (name: string, summary: string, input = IdInput) =>
    runProcedure(application, name, {
      summary: `${summary}; answers true`,
      input,
      output: Ok(),
      queue: (i: { applicationId: string; title?: string; description?: string }, ctx) => ctx.cradle.applicationRequests.run(i.applicationId, name, i),
      answer: () => true,
    });
  const scale = (name: string, summary: string) =>
    runProcedure(application, name, {
      summary: `${summary}; answers the application with its relations`,
      input: IdInput,
      output: applicationFound(relations),
      queue: ({ applicationId }, ctx) => ctx.cradle.applicationRequests.run(applicationId, name, {}),
      answer: ({ applicationId }, ctx) => ctx.cradle.applicationRequests.found(applicationId),
    });

  const declared = [
    application.mutation('create', {
      permission: 'service.create',
      summary: 'Create an application in an environment (current: environmentId; older: projectId → its default environment)',
      input: CreateInput,
      output: ApplicationFields,
      handler: (input, ctx) => ctx.cradle.applicationRequests.create(input),
    }),
    application.query('one', {
      permission: 'service.read',
      summary: 'An application with its environment and project, deployments (newest first), mounts, ports, domains, redirects, security, registry and server',
      input: IdInput,
      output: applicationView(relations, allowed.forges),
      handler: ({ applicationId }, ctx) => ctx.cradle.applicationRequests.one(applicationId, allowed.forges),
    }),
    run('deploy', 'Queue a deployment: fetch the source, build, roll out the service', DeployInput),
    run('redeploy', 'Queue a rebuild and rollout of the current source', DeployInput),
    runProcedure(application, 'reload', {
      summary: 'Queue a restart of the running service with the same spec (no build); answers true',
      input: ReloadInput,
      output: Ok(),
      queue: ({ applicationId, appName }, ctx) => ctx.cradle.applicationRequests.reload(applicationId, appName),
      answer: () => true,
    }),
    scale('start', 'Queue scaling the service back to its replicas'),
    scale('stop', 'Queue scaling the service to zero; the status becomes idle'),
    application.mutation('delete', {
      permission: 'service.delete',
      summary: 'Delete the application: stops its deployments, removes its service, work directory, mounts, ports and deployment records; answers the record as it was, with its relations',
      input: IdInput,
      output: applicationFound(relations),
      handler: ({ applicationId }, ctx) => ctx.cradle.applicationRequests.remove(applicationId),
    }),
    save('saveEnvironment', 'Set the environment variables (dotenv text, with ${{project.KEY}}, ${{environment.KEY}} and ${{KEY}} references), build args and build secrets', SaveEnvironmentInput),
    save('saveBuildType', 'Choose how the source is built (the enabled builder providers)', saveBuildTypeInput(allowed)),
    save('saveDockerProvider', 'Deploy a container image (optionally from a registry with credentials)', SaveDockerInput, () => ({ sourceType: 'docker' })),
    save('saveGitProdiver', 'Deploy from a git URL (https or SSH with a stored key) — the older spelling', SaveGitInput, () => ({ sourceType: 'git' })),
    save('saveGitProvider', 'Deploy from a git URL (https or SSH with a stored key)', SaveGitInput, () => ({ sourceType: 'git' })),
    save('disconnectGitProvider', "Forget the git source (every provider's repository fields)", IdInput, () => gitSourceCleared(allowed.forges)),
    save('markRunning', 'Set the status to running', IdInput, () => ({ applicationStatus: 'running' })),
    save('update', 'Change any field of the application', updateInput(allowed)),
    save('refreshToken', 'Issue a new webhook refresh token', IdInput, () => ({ refreshToken: newRefreshToken() })),
    application.mutation('move', {
      permission: 'service.create',
      summary: 'Move the application to another environment of the organization',
      input: MoveInput,
      output: ApplicationFields,
      handler: ({ applicationId, targetEnvironmentId }, ctx) => ctx.cradle.applicationRequests.change(applicationId, { environmentId: targetEnvironmentId }),
    }),
    application.mutation('cleanQueues', {
      permission: 'deployment.cancel',
      summary: "Drop the application's queued (not yet running) deployments",
      input: IdInput,
      output: Ok(),
      async handler({ applicationId }, ctx) {
        await ctx.cradle.applicationRequests.clearQueue(applicationId);
        return true;
      },
    }),
    application.mutation('clearDeployments', {
      permission: 'deployment.create',
      summary: "Remove the application's finished deployments and their logs",
      input: IdInput,
      output: Ok(),
      async handler({ applicationId }, ctx) {
        await ctx.cradle.applicationRequests.clearDeployments(applicationId);
        return true;
      },
    }),
    application.mutation('killBuild', {
      permission: 'deployment.cancel',
      summary: 'Stop the running deployment (its build is killed) and drop the queued ones',
      input: IdInput,
      output: Ok(),
      async handler({ applicationId }, ctx) {
        await ctx.cradle.applicationRequests.cancel(applicationId);
        return true;
      },
    }),
    application.mutation('cancelDeployment', {
      permission: 'deployment.cancel',
      summary: 'Cancel the running and queued deployments; the previous version keeps running',
      input: IdInput,
      output: Type.Object({ success: Type.Boolean(), message: Type.String() }),
      async handler({ applicationId }, ctx) {
        await ctx.cradle.applicationRequests.cancel(applicationId);
        return { success: true, message: 'Deployment cancellation requested' };
      },
    }),
    application.query('search', {
      permission: 'member',
      summary: 'Applications matching the given texts (case-insensitive substrings), newest first, paged',
      input: SearchInput,
      output: SearchResult,
      handler: (input, ctx) => ctx.cradle.applicationRequests.search(input),
    }),
    application.query('readLogs', {
      permission: 'service.read',
      summary: "The running service's container output (last `tail` lines, `since` a duration, filtered by `search`)",
      input: ReadLogsInput,
      output: Type.String(),
      handler: (input, ctx) => ctx.cradle.applicationRequests.readLogs(input),
    }),
  ];
  // The drop source's upload, where that source is enabled.
  if (allowed.sourceTypes.includes('drop'))
    declared.push(
      runProcedure(application, 'dropDeployment', {
        summary: 'Deploy a zip archive (multipart/form-data: the archive in `zip`): it becomes the source (sourceType drop), built from dropBuildPath; answers true',
        description:
          "Every entry is checked before it is kept: no absolute path, no '..', no symbolic link or special file, at most providers.source.drop's maxEntries entries and maxUnpackedBytes bytes once inflated, each entry's size as declared; a refused archive is a 400 naming zip and the source before is kept. A single top-level folder is unwrapped. An archive larger than the config key uploadLimit is refused with 413.",
        input: DropInput,
        output: Ok(),
        multipart: { fileField: 'zip' },
        queue: async ({ applicationId, dropBuildPath }, ctx) => {
          const deploymentId = await ctx.cradle.applicationRequests.drop(applicationId, dropBuildPath, ctx.file!);
          // The source is no repository now: a push webhook Berth registered for it goes.
          await optionalService(ctx.cradle, 'deployHooks')?.syncWebhook(KIND, applicationId, ctx.cradle.em);
          return deploymentId;
        },
        answer: () => true,
      }),
    );
  // Each enabled forge that is a source gets its save<Forge>Provider, its input declared by the
  // forge (the peer's, for the four built-in ones) or made from its source fields.
  const names = new Set(declared.map(p => p.name));
  const forgeSaves = allowed.forges
    .map(f => ({ f, name: `save${f.id[0]!.toUpperCase()}${f.id.slice(1)}Provider` }))
    .filter(({ name }) => !names.has(name))
    .map(({ f, name }) => save(name, `Deploy from a ${f.label} repository`, saveForgeInput(f.fields), () => ({ sourceType: f.id })));
  return [...declared, ...forgeSaves];
}
