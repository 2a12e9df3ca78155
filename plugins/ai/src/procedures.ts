// ai.* — AI configurations of the caller's organization, the services it allows, their models,
// checked suggestions and their deploy, and log analyses.
import { Type, router } from '@berth/core';
import {
  AiIdInput,
  AiView,
  Analysis,
  AnalyzeLogsInput,
  ConnectionResult,
  CreateInput,
  CustomProviderView,
  DeployInput,
  EnabledProvider,
  GetModelsInput,
  Model,
  SaveCustomProvidersInput,
  Suggestion,
  SuggestInput,
  TestConnectionInput,
  UpdateInput,
} from './schemas.ts';

const ai = router('ai', 'organization');
const org = (ctx: { cradle: { principal?: { organizationId: string } | null } }) => ctx.cradle.principal!.organizationId;

export const aiProcedures = [
  ai.query('one', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'An AI configuration of the organization, without its key',
    input: AiIdInput,
    output: AiView,
    handler: ({ aiId }, ctx) => ctx.cradle.aiService.one(aiId, org(ctx), ctx.cradle.em),
  }),
  ai.query('get', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'The same as ai.one (the peer serves both)',
    input: AiIdInput,
    output: AiView,
    handler: ({ aiId }, ctx) => ctx.cradle.aiService.one(aiId, org(ctx), ctx.cradle.em),
  }),
  ai.query('getAll', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'Every AI configuration of the organization, newest first, without keys',
    input: Type.Object({}),
    output: Type.Array(AiView),
    handler: (_input, ctx) => ctx.cradle.aiService.all(org(ctx), ctx.cradle.em),
  }),
  ai.query('getEnabledProviders', {
    permission: 'member',
    summary: "The organization's enabled AI configurations, newest first, as the log analysis offers them: aiId, name and model (never a URL or key)",
    input: Type.Object({}),
    output: Type.Array(EnabledProvider),
    handler: (_input, ctx) => ctx.cradle.aiService.enabled(org(ctx), ctx.cradle.em),
  }),
  ai.query('getCustomProviders', {
    permission: 'member',
    summary: 'The AI services the organization allows ([]: none listed, so any URL the instance reaches may be configured)',
    input: Type.Object({}),
    output: Type.Array(CustomProviderView),
    handler: (_input, ctx) => ctx.cradle.aiService.customProviders(org(ctx), ctx.cradle.em),
  }),
  ai.mutation('saveCustomProviders', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      "Replace the list of AI services the organization allows; once it lists one, ai.create and ai.update take only listed URLs (403 otherwise). Each URL is checked as a configuration's is; answers the list as stored",
    input: SaveCustomProvidersInput,
    output: Type.Array(CustomProviderView),
    handler: (input, ctx) => ctx.cradle.aiService.saveCustomProviders(input, org(ctx), ctx.cradle.em),
  }),
  ai.query('getModels', {
    permission: 'member',
    summary: 'The models a URL offers: the URL of one of the organization\'s configurations (apiKey "" uses its stored key), or a host listed in outboundAllow',
    input: GetModelsInput,
    output: Type.Array(Model),
    handler: (input, ctx) => ctx.cradle.aiService.models(input, org(ctx), ctx.cradle.em),
  }),
  ai.mutation('create', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'Store an AI configuration; the key is kept encrypted and never answered',
    input: CreateInput,
    output: AiView,
    handler: (input, ctx) => ctx.cradle.aiService.create(input, org(ctx), ctx.cradle.em),
  }),
  ai.mutation('update', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Change an AI configuration's name, URL, key, model or whether it is enabled",
    input: UpdateInput,
    output: AiView,
    handler: (input, ctx) => ctx.cradle.aiService.update(input, org(ctx), ctx.cradle.em),
  }),
  ai.mutation('delete', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'Delete an AI configuration; answers it as it was',
    input: AiIdInput,
    output: AiView,
    handler: ({ aiId }, ctx) => ctx.cradle.aiService.remove(aiId, org(ctx), ctx.cradle.em),
  }),
  ai.mutation('testConnection', {
    permission: 'member',
    summary: 'Ask the model for one word with the given URL, key and model (same reach as getModels); a provider error is a 400 quoting it',
    input: TestConnectionInput,
    output: ConnectionResult,
    handler: (input, ctx) => ctx.cradle.aiService.testConnection(input, org(ctx), ctx.cradle.em),
  }),
  ai.mutation('suggest', {
    permission: 'member',
    summary:
      'Up to three compose suggestions for the request, each checked (parses, passes the compose lint and the host access policy, well-formed images); one that still fails after a retry carries its problems',
    input: SuggestInput,
    output: Type.Array(Suggestion),
    handler: (input, ctx) => ctx.cradle.aiService.suggest(input, org(ctx), ctx.cradle.em, ctx.cradle),
  }),
  ai.mutation('analyzeLogs', {
    permission: 'member',
    summary:
      "The configuration's model reads a build or runtime log and answers what happened, what went wrong and what to do (Markdown); a disabled configuration is a 400, a provider error a 400 quoting it with the key redacted",
    input: AnalyzeLogsInput,
    output: Analysis,
    handler: (input, ctx) => ctx.cradle.aiService.analyzeLogs(input, org(ctx), ctx.cradle.em),
  }),
  ai.mutation('deploy', {
    permission: 'service.create',
    summary: 'Check a compose file as suggest does (400 naming each problem), then create the stack with its domains and config files and queue its deploy; answers null',
    // A one-member union: the OpenAPI document keeps an answer schema for it (a bare null type has none).
    input: DeployInput,
    output: Type.Union([Type.Null({ description: 'null, as the peer answers' })]),
    handler: (input, ctx) => ctx.cradle.aiService.deploy(input, ctx.cradle),
  }),
];
