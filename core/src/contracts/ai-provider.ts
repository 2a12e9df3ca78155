// A language model service (OpenAI-compatible servers, Ollama, Anthropic, a third party's) as
// one provider: it lists the models a configuration reaches and answers one prompt, as text or
// as a JSON object of a given schema. The ai plugin keeps the configurations (URL, sealed key,
// model) and picks the provider of each from its URL; the provider keeps no state, and talks to
// the service only through the `fetch` it is handed, which refuses addresses the instance does
// not allow. Enabled like every provider: `providers.ai.<id>`.

/** One configuration as a call uses it. */
export interface AiConnection {
  /** The service's base URL as the record holds it, without a trailing slash ("https://api.openai.com/v1"). */
  apiUrl: string;
  /** The API key, opened; "" when the service needs none. A secret: never put it in a message. */
  apiKey: string;
  /** The only way to reach the service: the instance's guarded fetch (allowed hosts, no private addresses unless listed, no redirects). */
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  /** Aborted when the call's time is up. */
  signal: AbortSignal;
}

/** A model the service offers, in the peer's shape (`ai.getModels`). */
export interface AiModel {
  id: string;
  object: 'model';
  /** When it was made, in Unix seconds, or when it was listed when the service does not say. */
  created: number;
  owned_by: string;
}

/** One prompt to answer. */
export interface AiRequest {
  /** The model's id, as listModels answered it. */
  model: string;
  /** What the model is told to be and do. */
  system: string;
  /** The user's part. */
  prompt: string;
  /** A JSON Schema the answer must be an object of (structured output); absent for free text. */
  schema?: Record<string, unknown>;
  /** The schema's name, where the service wants one ("suggestions"). */
  schemaName?: string;
}

export interface AiProvider {
  /** Its id within the contract ("openai", "ollama", "anthropic"). */
  readonly id: string;
  /** What users call it ("Ollama"), for messages. */
  readonly label: string;
  /**
   * Whether a configuration with this URL is its own (Ollama: port 11434; Anthropic:
   * api.anthropic.com). The plugin asks every enabled provider but `openai`, which serves the URLs
   * no other claims.
   */
  matches(apiUrl: URL): boolean;
  /** The models the configuration reaches; AiProviderError when the service refuses or fails. */
  listModels(connection: AiConnection): Promise<AiModel[]>;
  /**
   * The model's answer to one prompt: its text, or with `schema` the JSON text of the object it
   * produced (the service's structured output where it has one). AiProviderError on failure.
   */
  generate(connection: AiConnection, request: AiRequest): Promise<string>;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `ai.<id>`: a language model service (openai, ollama, anthropic...). */
    ai: AiProvider;
  }
}
