// compose.* — every operation of both API variants and the peer's others, through the request's
// ComposeRequests (requests.ts); runs (deploy, redeploy, start, stop) go on the durable deploy
// queue; engine work happens in the deployer.
import { optionalService, Type, router, schema, type Cradle, type Need, type ProcedureContext } from '@berth/core';
import { gitSourceCleared, relationSchemas, runProcedure, type ForgeSource } from '@berth/plugin-workloads';
import {
  Base64Input,
  CatalogInput,
  ContainerMount,
  CreateInput,
  DeleteInput,
  DeployInput,
  DeployTemplateInput,
  Done,
  IdInput,
  LoadServicesInput,
  MountsByServiceInput,
  MoveInput,
  PreviewInput,
  ProcessedTemplate,
  Queued,
  ReadLogsInput,
  SaveEnvironmentInput,
  SearchInput,
  SearchResult,
  SuffixInput,
  Template,
  requestedSuffix,
  type ComposeSchemas,
} from './schemas.ts';

const compose = router('compose', 'organization');
const Ok = schema.Ok;

/** Made once every plugin is set up: the relations' schemas are their plugins'; the stack's schemas and the enabled forges, the plugin's (index.ts). */
export function composeProcedures({ forges, schemas }: { forges: readonly ForgeSource[]; schemas: ComposeSchemas }, cradle: Cradle) {
  const relations = relationSchemas(cradle, optionalService(cradle, 'gitProviders'));
  const { ComposeFields, UpdateInput, composeFound, composeView } = schemas;
  /** What disconnectGitProvider leaves (the peer's): no git source (every forge's fields), the github type with push triggers, the stack idle. */
  const gitFieldsCleared = { ...gitSourceCleared(forges), triggerType: 'push', sourceType: 'github', composeStatus: 'idle', watchPaths: null, enableSubmodules: false } as const;
  const queue = (name: string) => (i: { composeId: string; title?: string; description?: string | null }, ctx: ProcedureContext) => ctx.cradle.composeRequests.run(i.composeId, name, i);
  /** deploy and redeploy: the peer answers {success, message, composeId}. */
  const queued = (name: string, summary: string, message: string) =>
    runProcedure(compose, name, {
      summary: `${summary}; answers {success, message, composeId}`,
      input: DeployInput,
      output: Queued,
      queue: queue(name),
      answer: ({ composeId }) => ({ success: true, message, composeId }),
    });
  /** start and stop: the peer answers true. */
  const run = (name: string, summary: string) => runProcedure(compose, name, { summary: `${summary}; answers true`, input: IdInput, output: Ok(), queue: queue(name), answer: () => true });
  const ok = (name: string, permission: Need, summary: string, input: typeof IdInput, act: (c: Cradle['composeRequests'], composeId: string) => Promise<unknown>) =>
    compose.mutation(name, {
      permission,
      summary: `${summary}; answers true`,
      input,
      output: Ok(),
      async handler({ composeId }, ctx) {
        await act(ctx.cradle.composeRequests, composeId);
        return true;
      },
    });
  /** A mutation that acts on the stack and answers the peer's `{success, message}`. */
  const done = (name: string, permission: Need, summary: string, message: string, act: (c: Cradle['composeRequests'], composeId: string) => Promise<unknown>) =>
    compose.mutation(name, {
      permission,
      summary,
      input: IdInput,
      output: Done,
      async handler({ composeId }, ctx) {
        await act(ctx.cradle.composeRequests, composeId);
        return { success: true, message };
      },
    });
  const text = (
    name: string,
    permission: Need,
    summary: string,
    act: (c: Cradle['composeRequests'], i: { composeId: string; suffix?: string; prefix?: string }) => Promise<string>,
    input: typeof IdInput | typeof SuffixInput = IdInput,
    kind: 'query' | 'mutation' = 'query',
  ) => compose[kind](name, { permission, summary, input, output: Type.String(), handler: (i: { composeId: string; suffix?: string; prefix?: string }, ctx) => act(ctx.cradle.composeRequests, i) });

  return [
    compose.mutation('create', {
      permission: 'service.create',
      summary: 'Create a compose stack in an environment (current: environmentId; older: projectId → its default environment); with composeFile it is a raw source',
      input: CreateInput,
      output: ComposeFields,
      handler: (input, ctx) => ctx.cradle.composeRequests.create(input),
    }),
    compose.query('one', {
      permission: 'service.read',
      summary: 'A compose stack with its environment and project, deployments (newest first) and mounts',
      input: IdInput,
      output: composeView(relations),
      handler: ({ composeId }, ctx) => ctx.cradle.composeRequests.one(composeId),
    }),
    compose.mutation('update', {
      permission: 'service.create',
      summary: 'Change any field of the stack (the file, its type, its git source, composePath, a custom command checked by the command parser...)',
      input: UpdateInput,
      output: ComposeFields,
      handler: ({ composeId, ...changes }, ctx) => ctx.cradle.composeRequests.change(composeId, changes),
    }),
    compose.mutation('saveEnvironment', {
      permission: 'envVars.write',
      summary: "Set the env (dotenv text, with ${{project.KEY}}, ${{environment.KEY}} references), written to the stack's .env file at deploy; answers true",
      input: SaveEnvironmentInput,
      output: Ok(),
      async handler({ composeId, env, createEnvFile }, ctx) {
        await ctx.cradle.composeRequests.change(composeId, { env, createEnvFile });
        return true;
      },
    }),
    compose.mutation('delete', {
      permission: 'service.delete',
      summary: 'Delete the stack: its containers or services, networks, directory, mounts, domains and deployments; its named volumes too when deleteVolumes; answers the record as it was',
      input: DeleteInput,
      output: composeFound(relations),
      handler: ({ composeId, deleteVolumes }, ctx) => ctx.cradle.composeRequests.remove(composeId, deleteVolumes),
    }),
    done('cleanQueues', 'deployment.create', "Drop the stack's queued (not yet running) deployments", 'Queues cleaned successfully', (c, id) => c.clearQueue(id)),
    ok('clearDeployments', 'deployment.create', "Remove the stack's finished deployments and their logs", IdInput, (c, id) => c.clearDeployments(id)),
    ok('killBuild', 'deployment.cancel', 'Stop the running deployment (its program is killed) and drop the queued ones', IdInput, (c, id) => c.cancel(id)),
    done('cancelDeployment', 'deployment.cancel', 'Cancel the running and queued deployments; what ran before keeps running', 'Deployment cancellation requested', (c, id) => c.cancel(id)),
    compose.query('loadServices', {
      permission: 'service.read',
      summary: "The service names of the stack's file",
      input: LoadServicesInput,
      output: Type.Array(Type.String()),
      handler: ({ composeId }, ctx) => ctx.cradle.composeRequests.services(composeId),
    }),
    compose.query('loadMountsByService', {
      permission: 'service.create',
      summary: "The named volumes mounted by a service's container, as the engine reports them",
      input: MountsByServiceInput,
      output: Type.Array(ContainerMount),
      handler: ({ composeId, serviceName }, ctx) => ctx.cradle.composeRequests.mountsByService(composeId, serviceName) as never, // cast: the engine's mounts, as it reports them
    }),
    compose.mutation('fetchSourceType', {
      permission: 'service.create',
      summary: "The stack's source type",
      input: IdInput,
      output: Type.String(),
      handler: ({ composeId }, ctx) => ctx.cradle.composeRequests.sourceType(composeId),
    }),
    text(
      'randomizeCompose',
      'service.create',
      'The file with a suffix on its services, volumes, networks, configs, secrets and every reference to them (not saved)',
      (c, i) => c.randomized(i.composeId, requestedSuffix(i)),
      SuffixInput,
      'mutation',
    ),
    text(
      'isolatedDeployment',
      'service.create',
      'The file with a network of its own that every service joins (not saved)',
      (c, i) => c.isolated(i.composeId, requestedSuffix(i)),
      SuffixInput,
      'mutation',
    ),
    text('getConvertedCompose', 'service.read', "The file as the next deploy runs it: suffix, isolation and the domains' routing for the active proxy (Traefik labels, the platform network)", (c, i) =>
      c.converted(i.composeId),
    ),
    text('getDefaultCommand', 'service.read', 'The program line a deploy of the stack runs', (c, i) => c.defaultCommand(i.composeId)),
    compose.query('getIgnoredKeys', {
      permission: 'service.read',
      summary: "What the stack's compose type ignores or refuses in its file (e.g. build, depends_on under docker stack deploy), before anything runs",
      input: IdInput,
      output: Type.Array(Type.Object({ service: schema.Nullable(Type.String()), key: Type.String(), reason: Type.String() })),
      handler: ({ composeId }, ctx) => ctx.cradle.composeRequests.ignored(composeId),
    }),
    queued('deploy', 'Queue a deployment: fetch the file, convert it, run the Compose program or docker stack deploy, wait until every service runs', 'Deployment queued'),
    queued('redeploy', 'Queue a rebuild and rollout of the current source', 'Redeployment queued'),
    run('stop', 'Queue stopping the stack (containers stopped, or services scaled to 0)'),
    run('start', 'Queue starting the stopped stack again'),
    ok('refreshToken', 'service.create', 'Issue a new webhook refresh token', IdInput, (c, id) => c.refreshToken(id)),
    ok('disconnectGitProvider', 'service.create', "Forget the git source (every provider's repository fields)", IdInput, (c, id) => c.change(id, gitFieldsCleared)),
    compose.mutation('move', {
      permission: 'service.create',
      summary: 'Move the stack to another environment of the organization',
      input: MoveInput,
      output: ComposeFields,
      handler: ({ composeId, targetEnvironmentId }, ctx) => ctx.cradle.composeRequests.change(composeId, { environmentId: targetEnvironmentId }),
    }),
    compose.query('search', {
      permission: 'member',
      summary: 'Stacks matching the given texts (case-insensitive substrings), newest first, paged',
      input: SearchInput,
      output: SearchResult,
      handler: (input, ctx) => ctx.cradle.composeRequests.search(input),
    }),
    compose.query('readLogs', {
      permission: 'service.read',
      summary: 'A container of the stack: its output (last `tail` lines, `since` a duration, filtered by `search`)',
      input: ReadLogsInput,
      output: Type.String(),
      handler: (input, ctx) => ctx.cradle.composeRequests.readLogs(input),
    }),
    compose.query('templates', {
      permission: 'member',
      summary: 'The template catalog (config templatesSource, env BERTH_TEMPLATES; or baseUrl)',
      input: CatalogInput,
      output: Type.Array(Template),
      handler: ({ baseUrl }, ctx) => ctx.cradle.composeRequests.templates(baseUrl),
    }),
    compose.query('getTags', {
      permission: 'member',
      summary: "The tags of the catalog's templates",
      input: CatalogInput,
      output: Type.Array(Type.String()),
      handler: async ({ baseUrl }, ctx) => [...new Set((await ctx.cradle.composeRequests.templates(baseUrl)).flatMap(t => t.tags))],
    }),
    compose.mutation('deployTemplate', {
      permission: 'service.create',
      summary: 'Create a stack from a catalog template, with its env, file mounts and domains (deploy it next)',
      input: DeployTemplateInput,
      output: ComposeFields,
      handler: (input, ctx) => ctx.cradle.composeRequests.deployTemplate(input),
    }),
    compose.mutation('previewTemplate', {
      permission: 'member',
      summary: 'A base64 template processed for appName: its file and generated env, mounts and domains (nothing saved)',
      input: PreviewInput,
      output: ProcessedTemplate,
      handler: ({ base64, appName }, ctx) => ctx.cradle.composeRequests.preview(base64, appName),
    }),
    compose.mutation('processTemplate', {
      permission: 'service.create',
      summary: 'A base64 template processed for the stack (nothing saved)',
      input: Base64Input,
      output: ProcessedTemplate,
      handler: ({ composeId, base64 }, ctx) => ctx.cradle.composeRequests.process(composeId, base64),
    }),
    compose.mutation('import', {
      permission: 'service.create',
      summary: "Replace the stack's file, env, file mounts and domains with a base64 template's",
      input: Base64Input,
      output: Done,
      handler: ({ composeId, base64 }, ctx) => ctx.cradle.composeRequests.importTemplate(composeId, base64),
    }),
  ];
}
