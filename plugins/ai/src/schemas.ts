// What ai.* takes and answers. Field names follow the peer's API; no answer carries an API key.
// The spec's bounds stand where the peer is looser (create.apiKey and deploy.envVariables: min 1).
import { Type, schema, type Static } from '@berth/core';

const { Nullable, NonEmpty, Timestamp } = schema;
const Id = NonEmpty({ maxLength: 255 });
const Url = () =>
  Type.String({
    minLength: 1,
    maxLength: 2048,
    format: 'uri',
    description: "the service's base URL (https://api.openai.com/v1, http://ollama:11434, https://api.anthropic.com/v1); it chooses the provider",
  });
const Key = (min: number) => Type.String({ minLength: min, maxLength: 4096, description: 'the API key (Ollama needs none: give a placeholder)' });

export const AiIdInput = Type.Object({ aiId: Id });

export const CreateInput = Type.Object({ name: NonEmpty({ maxLength: 255 }), apiUrl: Url(), apiKey: Key(1), model: NonEmpty({ maxLength: 255 }), isEnabled: Type.Boolean() });
export type CreateInput = Static<typeof CreateInput>;

export const UpdateInput = Type.Object({
  aiId: Id,
  name: Type.Optional(NonEmpty({ maxLength: 255 })),
  apiUrl: Type.Optional(Url()),
  apiKey: Type.Optional(Key(1)),
  model: Type.Optional(NonEmpty({ maxLength: 255 })),
  isEnabled: Type.Optional(Type.Boolean()),
  createdAt: Type.Optional(Type.String({ maxLength: 64, description: 'accepted as the peer does, not changed' })),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const GetModelsInput = Type.Object({
  apiUrl: NonEmpty({ maxLength: 2048, description: "the URL of one of the organization's AI configurations, or one the instance lists (config outboundAllow)" }),
  apiKey: Type.String({ maxLength: 4096, description: 'the key; "" uses the stored key of the configuration with this URL' }),
});
export type GetModelsInput = Static<typeof GetModelsInput>;

export const TestConnectionInput = Type.Object({ ...GetModelsInput.properties, model: NonEmpty({ maxLength: 255 }) });
export type TestConnectionInput = Static<typeof TestConnectionInput>;

export const SuggestInput = Type.Object({ aiId: Id, input: NonEmpty({ maxLength: 10000, description: 'what the user wants to run' }), serverId: Type.Optional(Type.String({ maxLength: 255 })) });
export type SuggestInput = Static<typeof SuggestInput>;

const EnvVariable = Type.Object({ name: Type.String(), value: Type.String() });
const SuggestedDomain = Type.Object({ host: Type.String(), port: Type.Number(), serviceName: Type.String() });
const ConfigFile = Type.Object({ content: Type.String(), filePath: Type.String() });

/** One suggestion as the model must produce it (the peer's structure). */
export const ModelSuggestion = Type.Object({
  id: Type.String(),
  name: Type.String(),
  shortDescription: Type.String(),
  description: Type.String(),
  dockerCompose: Type.String(),
  envVariables: Type.Array(EnvVariable),
  domains: Type.Array(SuggestedDomain),
  configFiles: Nullable(Type.Array(ConfigFile)),
});
export type ModelSuggestion = Static<typeof ModelSuggestion>;
export const ModelAnswer = Type.Object({ suggestions: Type.Array(ModelSuggestion) });

export const Suggestion = Type.Object({
  ...ModelSuggestion.properties,
  problems: Type.Array(Type.String(), { description: "Berth's addition: what its checks found wrong after one retry (empty: the suggestion passed and ai.deploy takes it)" }),
});
export type Suggestion = Static<typeof Suggestion>;

export const DeployInput = Type.Object({
  environmentId: Id,
  id: Id,
  dockerCompose: NonEmpty({ maxLength: 1048576 }),
  envVariables: NonEmpty({ maxLength: 1048576, description: 'NAME=value lines' }),
  serverId: Type.Optional(Type.String({ maxLength: 255 })),
  name: NonEmpty({ maxLength: 255 }),
  description: Type.String({ maxLength: 4096 }),
  domains: Type.Optional(
    Type.Array(Type.Object({ host: NonEmpty({ maxLength: 255 }), port: Type.Number({ minimum: 1, maximum: 65535 }), serviceName: NonEmpty({ maxLength: 255 }) }), { maxItems: 50 }),
  ),
  configFiles: Type.Optional(Type.Array(Type.Object({ filePath: NonEmpty({ maxLength: 1024 }), content: NonEmpty({ maxLength: 1048576 }) }), { maxItems: 50 })),
});
export type DeployInput = Static<typeof DeployInput>;

/** A configuration as every read answers it: without its key. */
export const AiView = Type.Object({
  aiId: Type.String(),
  name: Type.String(),
  apiUrl: Type.String(),
  model: Type.String(),
  isEnabled: Type.Boolean(),
  organizationId: Type.String(),
  createdAt: Timestamp(),
});
export type AiView = Static<typeof AiView>;

export const Model = Type.Object({ id: Type.String(), object: Type.String(), created: Type.Number(), owned_by: Type.String() });

export const ConnectionResult = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const AnalyzeLogsInput = Type.Object({
  aiId: Id,
  logs: NonEmpty({ maxLength: 500_000, description: 'the log text to analyse, as the dashboard shows it' }),
  context: Type.Union([Type.Literal('build'), Type.Literal('runtime')], { description: "build: a deployment's log; runtime: a container's log" }),
});
export type AnalyzeLogsInput = Static<typeof AnalyzeLogsInput>;

export const Analysis = Type.Object({ analysis: Type.String({ description: "the model's analysis (Markdown: summary, issues, likely cause, what to do)" }) });

/** An enabled configuration as the log analysis picks one: never its URL or key. */
export const EnabledProvider = Type.Object({ aiId: Type.String(), name: Type.String(), model: Type.String() });

/** An AI service the organization allows: once one is listed, configurations may use only the listed URLs. */
export const CustomProvider = Type.Object({ name: NonEmpty({ maxLength: 255 }), apiUrl: Url() });
export type CustomProvider = Static<typeof CustomProvider>;
export const CustomProviderView = Type.Object({ name: Type.String(), apiUrl: Type.String({ description: 'as stored: trimmed, without a trailing slash' }) });

export const SaveCustomProvidersInput = Type.Object({
  providers: Type.Array(CustomProvider, { maxItems: 100, description: "the organization's whole list, replacing the one before ([]: any URL the instance reaches)" }),
});
export type SaveCustomProvidersInput = Static<typeof SaveCustomProvidersInput>;
