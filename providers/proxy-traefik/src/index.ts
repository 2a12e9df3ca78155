// @berth/provider-proxy-traefik: proxy provider "traefik".
import { defineProvider, Type } from '@berth/core';
import { TraefikProxy } from './traefik-proxy.ts';

const options = Type.Object(
  {
    serviceName: Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$', default: 'berth-proxy', description: 'The Swarm service name of the proxy' }),
    acmeEmail: Type.String({
      env: 'BERTH_PROXY_TRAEFIK_ACME_EMAIL',
      minLength: 3,
      default: 'test@localhost.com',
      description: "Contact address of the letsencrypt resolver (the peer's default is a placeholder: set yours)",
    }),
    acmeCa: Type.Optional(Type.String({ env: 'BERTH_PROXY_TRAEFIK_ACME_CA', format: 'uri', description: "ACME directory of the letsencrypt resolver (caServer); absent = Let's Encrypt" })),
    upstreamHost: Type.Enum(['service', 'tasks'], {
      default: 'service',
      description:
        "service: http://<appName>:<port>, the service's virtual IP, exactly as the peer writes it (every Swarm with IPVS); tasks: http://tasks.<appName>:<port> (DNS round robin, for hosts without IPVS)",
    }),
  },
  { additionalProperties: false },
);

export default defineProvider({
  contract: 'proxy',
  id: 'traefik',
  options,
  create: (o, { config }) =>
    new TraefikProxy(o, {
      dataDir: config.dataDir,
      image: config.proxyImage ?? 'traefik:v3.5',
      httpPort: config.proxyHttpPort,
      httpsPort: config.proxyHttpsPort,
      // The platform network (config platformNetwork), which Traefik's docker provider watches.
      network: config.platformNetwork,
    }),
});
export { TraefikProxy, TRAEFIK_DIR } from './traefik-proxy.ts';
export * from './traefik-files.ts';
