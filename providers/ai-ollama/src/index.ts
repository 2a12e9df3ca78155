// @berth/provider-ai-ollama: an Ollama server (the URLs on its port, 11434): GET <apiUrl>/api/tags,
// POST <apiUrl>/api/chat, structured output through `format` (a JSON Schema). Ollama needs no key;
// a record still holds one (a placeholder), since ai.create requires it.
import { aiCall, AiProviderError, defineProvider, Type, type AiConnection, type AiModel, type AiProvider, type AiRequest } from '@berth/core';

const base = (c: AiConnection) => c.apiUrl.replace(/\/(api|v1)$/, '');

export class OllamaProvider implements AiProvider {
  readonly id = 'ollama';
  readonly label = 'Ollama';

  matches(apiUrl: URL): boolean {
    return apiUrl.port === '11434';
  }

  async listModels(c: AiConnection): Promise<AiModel[]> {
    const res = await aiCall(c, `${base(c)}/api/tags`, {});
    const body = (await res.json()) as { models?: { name?: string; model?: string; modified_at?: string }[] };
    return (body.models ?? [])
      .filter(m => typeof (m.name ?? m.model) === 'string')
      .map(m => ({ id: (m.name ?? m.model)!, object: 'model', created: Math.floor((Date.parse(m.modified_at ?? '') || Date.now()) / 1000), owned_by: 'ollama' }));
  }

  async generate(c: AiConnection, r: AiRequest): Promise<string> {
    const res = await aiCall(c, `${base(c)}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: r.model,
        stream: false,
        messages: [
          { role: 'system', content: r.system },
          { role: 'user', content: r.prompt },
        ],
        ...(r.schema ? { format: r.schema } : {}),
      }),
    });
    const body = (await res.json()) as { message?: { content?: string }; error?: string };
    if (body.error) throw new AiProviderError(res.status, body.error);
    if (typeof body.message?.content !== 'string') throw new AiProviderError(res.status, 'the answer has no message content');
    return body.message.content;
  }
}

export default defineProvider({ contract: 'ai', id: 'ollama', options: Type.Object({}, { additionalProperties: false }), create: () => new OllamaProvider() });
