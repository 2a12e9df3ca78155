// The ai plugin's configuration keys (section "ai").
import { Type, type Static } from '@berth/core';

const AiConfig = Type.Object({ aiTimeoutSeconds: Type.Integer({ env: 'BERTH_AI_TIMEOUT', minimum: 1, maximum: 600, default: 120, description: 'How long one call to an AI provider may take' }) });
export default AiConfig;
export type AiSettings = Static<typeof AiConfig>;

declare module '@berth/core' {
  interface BerthConfig extends AiSettings {}
}
