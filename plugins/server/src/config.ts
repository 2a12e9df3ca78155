// The server plugin's configuration keys (section "server").
import { Type, type Static } from '@berth/core';

const ServerConfig = Type.Object({
  serverProbeSeconds: Type.Integer({
    env: 'BERTH_SERVER_PROBE_SECONDS',
    minimum: 1,
    maximum: 3600,
    default: 30,
    description: 'Seconds between two reachability probes of each server (an engine ping over its SSH connection); a server is unreachable after two failed probes in a row',
  }),
});
export default ServerConfig;
export type ServerSettings = Static<typeof ServerConfig>;

declare module '@berth/core' {
  interface BerthConfig extends ServerSettings {}
}
