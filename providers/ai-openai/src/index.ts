// @berth/provider-ai-openai: any server speaking OpenAI's API (OpenAI, Groq, Mistral, OpenRouter,
// LM Studio, vLLM, LiteLLM…): GET <apiUrl>/models, POST <apiUrl>/chat/completions. The URL a
// record holds ends where those paths start ("https://api.openai.com/v1").
import { aiCall, AiProviderError, defineProvider, Type, type AiConnection, type AiModel, type AiProvider, type AiRequest } from '@berth/core';

const headers = (c: AiConnection) => ({ 'content-type': 'application/json', ...(c.apiKey ? { authorization: `Bearer ${c.apiKey}` } : {}) });

export class OpenAiProvider implements AiProvider {
  readonly id = 'openai';
  readonly label = 'OpenAI-compatible';

  /** The default: the plugin gives it every URL no other provider claims. */
  matches(): boolean {
    return false;
  }

  async listModels(c: AiConnection): Promise<AiModel[]> {
    const res = await aiCall(c, `${c.apiUrl}/models`, { headers: headers(c) });
    const body = (await res.json()) as { data?: { id?: string; created?: number; owned_by?: string }[] };
    const now = Math.floor(Date.now() / 1000);
    return (body.data ?? [])
      .filter(m => typeof m.id === 'string')
      .map(m => ({ id: m.id!, object: 'model', created: typeof m.created === 'number' ? m.created : now, owned_by: m.owned_by ?? 'provider' }));
  }

  async generate(c: AiConnection, r: AiRequest): Promise<string> {
    const res = await aiCall(c, `${c.apiUrl}/chat/completions`, {
      method: 'POST',
      headers: headers(c),
      body: JSON.stringify({
        model: r.model,
        messages: [
          { role: 'system', content: r.system },
          { role: 'user', content: r.prompt },
        ],
        ...(r.schema ? { response_format: { type: 'json_schema', json_schema: { name: r.schemaName ?? 'answer', schema: r.schema, strict: true } } } : {}),
      }),
    });
    const body = (await res.json()) as { choices?: { message?: { content?: string | null; refusal?: string | null } }[] };
    const message = body.choices?.[0]?.message;
    if (message?.refusal) throw new AiProviderError(res.status, `the model refused: ${message.refusal}`);
    if (typeof message?.content !== 'string') throw new AiProviderError(res.status, 'the answer has no message content');
    return message.content;
  }
}

export default defineProvider({ contract: 'ai', id: 'openai', options: Type.Object({}, { additionalProperties: false }), create: () => new OpenAiProvider() });
