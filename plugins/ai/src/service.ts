// AI configurations of the organization and the calls made with them. A configuration's
// provider is chosen from its URL (port 11434: Ollama; api.anthropic.com: Anthropic; anything
// else: OpenAI-compatible, or an enabled third party's provider that claims it). Every call goes
// through the outbound guard (core's outbound.ts, for the configuration's organization), and every provider error becomes a BAD_REQUEST quoting the
// provider's status and message with the key redacted: a provider's 401 is never Berth's 401.
import { randomBytes } from 'node:crypto';
import {
  AiProviderError,
  BerthError,
  badRequest,
  forbidden,
  invalidField,
  iso,
  newId,
  notFound,
  type AiConnection,
  type AiModel,
  type AiProvider,
  type BerthConfig,
  type Cradle,
  type EntityManager,
  type ProviderRegistry,
  type OutboundGuard,
  type SecretBox,
  findOwned,
} from '@berth/core';
import { Ai, AiCustomProvider, type AiRow } from './entities.ts';
import type { AiView, AnalyzeLogsInput, CreateInput, DeployInput, GetModelsInput, SaveCustomProvidersInput, Suggestion, SuggestInput, TestConnectionInput, UpdateInput } from './schemas.ts';
import { logsSystemPrompt } from './analyze-logs.ts';
import { answerSchema, parseAnswer, problemsOf, retryPrompt, systemPrompt } from './suggest.ts';

const toView = (r: AiRow): AiView => ({ aiId: r.aiId, name: r.name, apiUrl: r.apiUrl, model: r.model, isEnabled: r.isEnabled, organizationId: r.organizationId, createdAt: iso(r.createdAt)! });

/** The URL as stored and compared: trimmed, without trailing slashes. */
export const normalizeUrl = (url: string) => url.trim().replace(/\/+$/, '');

/** `text` with every occurrence of the key (and of its Bearer form) replaced. */
export function redact(text: string, key: string): string {
  if (!key || key.length < 4) return text;
  return text.split(key).join('[redacted]');
}

export interface AiDeps {
  config: BerthConfig;
  secrets: () => SecretBox;
  providers: () => ProviderRegistry;
  outbound: () => OutboundGuard;
}

export class AiService {
  readonly #d: AiDeps;

  constructor(deps: AiDeps) {
    this.#d = deps;
  }

  // ------------------------------------------------------------ records
  async create(input: CreateInput, organizationId: string, em: EntityManager): Promise<AiView> {
    const apiUrl = await this.#allowedUrl(input.apiUrl, organizationId, em);
    const row = em.create(Ai, {
      aiId: newId(),
      name: input.name,
      apiUrl,
      apiKey: this.#d.secrets().encrypt(input.apiKey),
      model: input.model,
      isEnabled: input.isEnabled,
      organizationId,
      createdAt: new Date(),
    });
    await em.flush();
    return toView(row);
  }

  async one(aiId: string, organizationId: string, em: EntityManager): Promise<AiView> {
    return toView(await this.#find(aiId, organizationId, em));
  }

  /** Newest first, as the peer lists them. */
  async all(organizationId: string, em: EntityManager): Promise<AiView[]> {
    return (await em.find(Ai, { organizationId }, { orderBy: { createdAt: 'desc', aiId: 'asc' } })).map(toView);
  }

  async update(input: UpdateInput, organizationId: string, em: EntityManager): Promise<AiView> {
    const row = await this.#find(input.aiId, organizationId, em);
    if (input.name !== undefined) row.name = input.name;
    if (input.apiUrl !== undefined) row.apiUrl = await this.#allowedUrl(input.apiUrl, organizationId, em);
    if (input.apiKey !== undefined) row.apiKey = this.#d.secrets().encrypt(input.apiKey);
    if (input.model !== undefined) row.model = input.model;
    if (input.isEnabled !== undefined) row.isEnabled = input.isEnabled;
    await em.flush();
    return toView(row);
  }

  async remove(aiId: string, organizationId: string, em: EntityManager): Promise<AiView> {
    const view = toView(await this.#find(aiId, organizationId, em));
    await em.nativeDelete(Ai, { aiId, organizationId });
    return view;
  }

  /** The enabled configurations, newest first, as the log analysis offers them: id, name and model only. */
  async enabled(organizationId: string, em: EntityManager): Promise<{ aiId: string; name: string; model: string }[]> {
    return (await this.all(organizationId, em)).filter(a => a.isEnabled).map(a => ({ aiId: a.aiId, name: a.name, model: a.model }));
  }

  // ------------------------------------------------------------ the organization's allowed services
  /** The organization's list, in its order ([]: none listed, any URL the instance reaches may be configured). */
  async customProviders(organizationId: string, em: EntityManager): Promise<{ name: string; apiUrl: string }[]> {
    return (await em.find(AiCustomProvider, { organizationId }, { orderBy: { position: 'asc' } })).map(r => ({ name: r.name, apiUrl: r.apiUrl }));
  }

  /** Replaces the list; every URL is checked as a configuration's is (a 400 naming providers.<i>.apiUrl). Configurations already stored stay. */
  async saveCustomProviders(input: SaveCustomProvidersInput, organizationId: string, em: EntityManager): Promise<{ name: string; apiUrl: string }[]> {
    const providers: { name: string; apiUrl: string }[] = [];
    for (const [i, p] of input.providers.entries()) providers.push({ name: p.name, apiUrl: await this.#checkUrl(p.apiUrl, organizationId, `providers.${i}.apiUrl`) });
    await em.transactional(async tx => {
      // Two saves at once: the second waits for the first, then replaces its list (else both would insert position 0).
      await tx.getConnection().execute('select 1 from "organizations" where "id" = ? for update', [organizationId], 'all', tx.getTransactionContext());
      await tx.nativeDelete(AiCustomProvider, { organizationId });
      providers.forEach((p, position) => tx.create(AiCustomProvider, { organizationId, position, ...p }));
    });
    return providers;
  }

  // ------------------------------------------------------------ calls
  /** The provider of a URL: the first enabled one that claims it, else the OpenAI-compatible one. */
  providerFor(apiUrl: string): AiProvider {
    const registry = this.#d.providers();
    const url = new URL(apiUrl);
    const claimed = registry.all('ai').find(p => p.id !== 'openai' && p.matches(url));
    if (claimed) return claimed;
    if (!registry.has('ai', 'openai')) throw badRequest(`No AI provider serves ${url.origin} (enabled: ${registry.ids('ai').join(', ') || 'none'})`);
    return registry.get('ai', 'openai');
  }

  /** getModels: a URL one of the organization's configurations holds, or one outboundAllow lists. */
  async models(input: GetModelsInput, organizationId: string, em: EntityManager): Promise<AiModel[]> {
    const { apiUrl, apiKey } = await this.#reachable(input, organizationId, em);
    return this.#call(apiUrl, apiKey, organizationId, (p, c) => p.listModels(c));
  }

  async testConnection(input: TestConnectionInput, organizationId: string, em: EntityManager): Promise<{ success: boolean; message: string }> {
    const { apiUrl, apiKey } = await this.#reachable(input, organizationId, em);
    const text = await this.#call(apiUrl, apiKey, organizationId, (p, c) => p.generate(c, { model: input.model, system: 'Answer with one word.', prompt: "Reply with 'ok'" }));
    if (!text.trim()) throw badRequest('The AI provider answered no text');
    return { success: true, message: 'Connection successful' };
  }

  /** Up to three checked suggestions; one that fails is asked for again once, then answered with its problems. */
  async suggest(input: SuggestInput, organizationId: string, em: EntityManager, cradle: Cradle): Promise<Suggestion[]> {
    const row = await this.#find(input.aiId, organizationId, em);
    if (!row.isEnabled) throw notFound('An enabled AI configuration');
    const apiKey = this.#d.secrets().decrypt(row.apiKey);
    const domainBase = String((this.#d.config as { generatedDomainBase?: string }).generatedDomainBase ?? 'sslip.io');
    const ask = async (prompt: string) =>
      parseAnswer(
        await this.#call(row.apiUrl, apiKey, organizationId, (p, c) =>
          p.generate(c, { model: row.model, system: systemPrompt(domainBase), prompt, schema: answerSchema(), schemaName: 'suggestions' }),
        ),
      );
    const first = await ask(`The user's request: ${input.input}`);
    if (!first.length) throw notFound('Suggestions');
    const out: Suggestion[] = [];
    for (const s of first) {
      let current = s;
      let problems = problemsOf(cradle, current);
      if (problems.length) {
        const again = (await ask(retryPrompt(input.input, current, problems)))[0];
        if (again) {
          current = again;
          problems = problemsOf(cradle, current);
        }
      }
      out.push({ ...current, problems });
    }
    return out;
  }

  /** The configuration's model reads the logs and answers what went wrong and what to do (Markdown). */
  async analyzeLogs(input: AnalyzeLogsInput, organizationId: string, em: EntityManager): Promise<{ analysis: string }> {
    const row = await this.#find(input.aiId, organizationId, em);
    if (!row.isEnabled) throw badRequest('AI provider is not enabled', [{ path: ['aiId'], message: 'aiId: the AI configuration is not enabled (ai.update with isEnabled: true)' }]);
    const apiKey = this.#d.secrets().decrypt(row.apiKey);
    const text = await this.#call(row.apiUrl, apiKey, organizationId, (p, c) =>
      p.generate(c, { model: row.model, system: logsSystemPrompt(input.context), prompt: `The ${input.context} logs:\n${input.logs}` }),
    );
    if (!text.trim()) throw badRequest(`The AI provider (${this.providerFor(row.apiUrl).label}) answered no text`);
    return { analysis: redact(text.trim(), apiKey) };
  }

  /** Checks the file as suggest does, refuses it naming each problem, else makes the stack with its domains and file mounts and queues its deploy. */
  async deploy(input: DeployInput, cradle: Cradle): Promise<null> {
    const envVariables = input.envVariables
      .split('\n')
      .map(l => l.trim())
      .filter(l => l && !l.startsWith('#'))
      .map(l => ({ name: l.split('=')[0]!.trim() }));
    const problems = problemsOf(cradle, { dockerCompose: input.dockerCompose, domains: input.domains, configFiles: input.configFiles, envVariables });
    if (problems.length) {
      throw badRequest(
        `The compose file cannot be deployed: ${problems.join('; ')}`,
        problems.map(message => ({ path: ['dockerCompose'], message })),
      );
    }
    const slug =
      input.id
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 40) || 'ai';
    const appName = `${slug}-${randomBytes(3).toString('hex')}`;
    const stack = await cradle.composeRequests.createRaw(
      {
        name: input.name,
        appName,
        description: input.description || null,
        environmentId: input.environmentId,
        serverId: input.serverId || null,
        composeFile: input.dockerCompose,
        env: input.envVariables,
      },
      {
        mounts: (input.configFiles ?? []).map(f => ({ filePath: f.filePath.replace(/^\.\/|^\.\.\/files\//, ''), content: f.content })),
        domains: (input.domains ?? []).map(d => ({ host: d.host, port: d.port, serviceName: d.serviceName, path: '/' })),
      },
    );
    await cradle.composeRequests.run(stack.composeId, 'deploy', { title: 'AI suggestion deployment' });
    return null;
  }

  // ------------------------------------------------------------ inside
  /** The URL as stored: http(s), no credentials, an address the organization may reach (a 400 naming the field). */
  async #checkUrl(apiUrl: string, organizationId: string, field = 'apiUrl'): Promise<string> {
    const url = this.#parseUrl(apiUrl, field);
    await this.#d.outbound().checkSaved(url, { field, organizationId });
    return url;
  }

  /** A configuration's URL: checked, and one of the organization's listed services when it lists any (else 403, as the peer). */
  async #allowedUrl(apiUrl: string, organizationId: string, em: EntityManager): Promise<string> {
    const url = this.#parseUrl(apiUrl);
    const listed = await this.customProviders(organizationId, em);
    if (listed.length && !listed.some(p => p.apiUrl === url)) {
      throw forbidden(`This API URL is not in your organization's allowed AI providers: apiUrl ${url} is none of ${listed.map(p => p.apiUrl).join(', ')} (ai.saveCustomProviders)`);
    }
    return this.#checkUrl(url, organizationId);
  }

  #parseUrl(apiUrl: string, field = 'apiUrl'): string {
    const url = normalizeUrl(apiUrl);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidField(field, 'must be a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidField(field, 'must be an http or https URL');
    if (parsed.username || parsed.password) throw invalidField(field, 'must not carry a user or password (give the key in apiKey)');
    return url;
  }

  /** The URL and key a getModels or testConnection may use; a 400 for a URL neither owned nor listed. */
  async #reachable(input: { apiUrl: string; apiKey: string }, organizationId: string, em: EntityManager): Promise<{ apiUrl: string; apiKey: string }> {
    const apiUrl = this.#parseUrl(input.apiUrl);
    const owned = await em.findOne(Ai, { organizationId, apiUrl }, { orderBy: { createdAt: 'desc' } });
    if (owned) return { apiUrl, apiKey: input.apiKey || this.#d.secrets().decrypt(owned.apiKey) };
    // No open fetcher: a URL no configuration holds only when the operator lists its host.
    if (!this.#d.outbound().listedUrl(apiUrl)) {
      throw invalidField('apiUrl', "is neither the URL of one of the organization's AI configurations nor a host this instance lists (config outboundAllow, env BERTH_OUTBOUND_ALLOW)");
    }
    return { apiUrl, apiKey: input.apiKey };
  }

  /** One provider call with the guarded fetch and the timeout; its errors as a BAD_REQUEST quoting the provider, the key redacted. */
  async #call<T>(apiUrl: string, apiKey: string, organizationId: string, act: (provider: AiProvider, connection: AiConnection) => Promise<T>): Promise<T> {
    const provider = this.providerFor(apiUrl);
    const signal = AbortSignal.timeout(this.#d.config.aiTimeoutSeconds * 1000);
    try {
      return await act(provider, { apiUrl, apiKey, fetch: this.#d.outbound().fetch({ field: 'apiUrl', organizationId }), signal });
    } catch (e) {
      if (e instanceof BerthError) {
        e.message = redact(e.message, apiKey);
        throw e;
      }
      if (e instanceof AiProviderError) {
        const said = e.status === null ? `could not be reached: ${e.message}` : `answered ${e.status}: ${e.message}`;
        throw badRequest(redact(`The AI provider (${provider.label}) ${said}`, apiKey));
      }
      if (signal.aborted) throw badRequest(`The AI provider (${provider.label}) did not answer within ${this.#d.config.aiTimeoutSeconds} s (config aiTimeoutSeconds)`);
      throw badRequest(redact(`The AI provider (${provider.label}) failed: ${(e as Error).message}`, apiKey));
    }
  }

  #find(aiId: string, organizationId: string, em: EntityManager): Promise<AiRow> {
    return findOwned(em, Ai, { aiId }, organizationId, 'AI settings');
  }
}
