// @berth/provider-proxy-caddy: proxy provider "caddy".
import { defineProvider, Type } from '@berth/core';
import { CaddyProxy } from './caddy-proxy.ts';

const options = Type.Object(
  {
    serviceName: Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$', default: 'berth-proxy', description: 'The Swarm service name of the proxy' }),
    acmeCa: Type.String({
      env: 'BERTH_PROXY_CADDY_ACME_CA',
      format: 'uri',
      default: 'https://acme-v02.api.letsencrypt.org/directory',
      description: "ACME directory of letsencrypt domains (Let's Encrypt's, or a private or test CA)",
    }),
    acmeEmail: Type.Optional(Type.String({ env: 'BERTH_PROXY_CADDY_ACME_EMAIL', minLength: 3, description: 'Contact address given to the ACME CA' })),
    acmeCaRoot: Type.Optional(
      Type.String({ env: 'BERTH_PROXY_CADDY_ACME_CA_ROOT', minLength: 1, description: "A PEM file on this host trusted for the ACME server's own TLS (a private or test CA)" }),
    ),
  },
  { additionalProperties: false },
);

export default defineProvider({
  contract: 'proxy',
  id: 'caddy',
  options,
  create: (o, { config }) => new CaddyProxy(o, { dataDir: config.dataDir, image: config.proxyImage ?? 'caddy:2.6', httpPort: config.proxyHttpPort, httpsPort: config.proxyHttpsPort }),
});
export { CaddyProxy };
export { caddyConfig } from './caddy-config.ts';
