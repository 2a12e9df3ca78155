// @berth/provider-ai-anthropic: Anthropic's Messages API (records whose URL is on
// api.anthropic.com): GET <apiUrl>/v1/models, POST <apiUrl>/v1/messages with x-api-key. Structured
// output is a tool the model must call: its input is the object of the schema.
import { aiCall, AiProviderError, defineProvider, Type, type AiConnection, type AiModel, type AiProvider, type AiRequest } from '@berth/core';

const VERSION = '2023-06-01';
const base = (c: AiConnection) => c.apiUrl.replace(/\/v1$/, '');
const headers = (c: AiConnection) => ({ 'content-type': 'application/json', 'x-api-key': c.apiKey, 'anthropic-version': VERSION });

export class AnthropicProvider implements AiProvider {
  readonly id = 'anthropic';
  readonly label = 'Anthropic';

  matches(apiUrl: URL): boolean {
    return apiUrl.hostname === 'api.anthropic.com';
  }

  async listModels(c: AiConnection): Promise<AiModel[]> {
    const res = await aiCall(c, `${base(c)}/v1/models?limit=1000`, { headers: headers(c) });
    const body = (await res.json()) as { data?: { id?: string; created_at?: string }[] };
    return (body.data ?? [])
      .filter(m => typeof m.id === 'string')
      .map(m => ({ id: m.id!, object: 'model', created: Math.floor((Date.parse(m.created_at ?? '') || Date.now()) / 1000), owned_by: 'anthropic' }));
  }

  async generate(c: AiConnection, r: AiRequest): Promise<string> {
    const tool = r.schemaName ?? 'answer';
    const res = await aiCall(c, `${base(c)}/v1/messages`, {
      method: 'POST',
      headers: headers(c),
      body: JSON.stringify({
        model: r.model,
        max_tokens: 8192,
        system: r.system,
        messages: [{ role: 'user', content: r.prompt }],
        ...(r.schema ? { tools: [{ name: tool, description: 'Give the answer', input_schema: r.schema }], tool_choice: { type: 'tool', name: tool } } : {}),
      }),
    });
    const body = (await res.json()) as { content?: { type: string; text?: string; name?: string; input?: unknown }[] };
    const blocks = body.content ?? [];
    if (r.schema) {
      const call = blocks.find(b => b.type === 'tool_use' && b.name === tool);
      if (!call) throw new AiProviderError(res.status, 'the answer has no structured output');
      return JSON.stringify(call.input);
    }
    const text = blocks
      .filter(b => b.type === 'text')
      .map(b => b.text ?? '')
      .join('');
    if (!text) throw new AiProviderError(res.status, 'the answer has no text');
    return text;
  }
}

export default defineProvider({ contract: 'ai', id: 'anthropic', options: Type.Object({}, { additionalProperties: false }), create: () => new AnthropicProvider() });
