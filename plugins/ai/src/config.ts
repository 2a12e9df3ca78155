// The ai plugin's configuration keys (section "ai").
import { Type, type Static } from '@berth/core';

const AiConfig = Type.Object({
  aiAllowedHosts: Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/@]+$' }), {
    env: 'BERTH_AI_ALLOWED_HOSTS',
    default: [],
    description:
      'host[:port] entries (comma-separated in the variable): the URLs ai.getModels and ai.testConnection may reach when no AI configuration of the organization has them, and the private, loopback or link-local addresses (an IP[:port]) any AI call may connect to',
  }),
  aiTimeoutSeconds: Type.Integer({ env: 'BERTH_AI_TIMEOUT', minimum: 1, maximum: 600, default: 120, description: 'How long one call to an AI provider may take' }),
});
export default AiConfig;
export type AiSettings = Static<typeof AiConfig>;

declare module '@berth/core' {
  interface BerthConfig extends AiSettings {}
}
