// The AI providers' one way to call their service: the guarded fetch of the connection, and a
// failed answer read into an AiProviderError the ai plugin turns into a BAD_REQUEST.
import type { AiConnection } from './contracts/ai-provider.ts';
import { isBerthError } from './errors.ts';
import { vendorMessage } from './outbound.ts';
import { AiProviderError } from './provider-errors.ts';

/** Reads a failed answer's message the way most services put it (`{error: {message}}`, `{error: "…"}`, `{message}`), else the status text. */
export async function aiErrorOf(res: Response): Promise<AiProviderError> {
  // Only the vendor's documented message field (OpenAI/Anthropic `error.message`, Ollama `error`): never an arbitrary body.
  const text = await res.text().catch(() => '');
  let message = '';
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const found = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    message = vendorMessage(found) ?? '';
  } catch {
    /* not JSON: not kept */
  }
  return new AiProviderError(res.status, message || res.statusText);
}

/** Calls the service with the guarded fetch; a network failure becomes an AiProviderError without status. */
export async function aiCall(connection: AiConnection, url: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await connection.fetch(url, { ...init, signal: connection.signal });
  } catch (e) {
    // Berth's own refusals (an address the instance does not allow) pass as they are.
    if (e instanceof AiProviderError || isBerthError(e)) throw e;
    throw new AiProviderError(null, `cannot be reached: ${(e as Error).message}`, { cause: e });
  }
  if (!res.ok) throw await aiErrorOf(res);
  return res;
}
