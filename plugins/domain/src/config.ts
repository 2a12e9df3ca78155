// The domain plugin's configuration keys (section "domain"): the proxy in front of workloads'
// domains and how domains are generated and checked. The proxy providers and the compose plugin
// read them from the configuration in the container, never from this file.
import { Type, type Static } from '@berth/core';

const DomainConfig = Type.Object({
  proxy: Type.String({
    env: 'BERTH_PROXY',
    pattern: '^[a-z][a-z0-9_]*$',
    default: 'caddy',
    description: "The proxy provider in front of workloads' domains: caddy, traefik, none (= domains are stored, nothing serves them) or a third party's id from providers.proxy",
  }),
  proxyImage: Type.Optional(Type.String({ env: 'BERTH_PROXY_IMAGE', minLength: 1, description: "Image of the proxy service; absent = the provider's default (caddy:2.6, traefik:v3.5)" })),
  proxyHttpPort: Type.Integer({ env: 'BERTH_PROXY_HTTP_PORT', minimum: 1, maximum: 65535, default: 80, description: "Host port of the proxy's plain-http entry point, published in host mode" }),
  proxyHttpsPort: Type.Integer({ env: 'BERTH_PROXY_HTTPS_PORT', minimum: 1, maximum: 65535, default: 443, description: "Host port of the proxy's https entry point, published in host mode" }),
  serverIp: Type.Optional(
    Type.String({ env: 'BERTH_SERVER_IP', minLength: 1, description: 'The public address of this server: generated domains point at it and the preflight expects hosts to resolve to it' }),
  ),
  generatedDomainBase: Type.String({
    env: 'BERTH_GENERATED_DOMAIN_BASE',
    pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$',
    default: 'sslip.io',
    description: 'Wildcard-DNS base of generated domains: <appName>-<random>-<ip with dashes>.<base>',
  }),
  dnsResolver: Type.Optional(
    Type.String({ env: 'BERTH_DNS_RESOLVER', pattern: '^[0-9a-fA-F.:\\[\\]]+$', description: "DNS server (address or address:port) the domain preflight asks; absent = the system's" }),
  ),
});
export default DomainConfig;
export type DomainSettings = Static<typeof DomainConfig>;

declare module '@berth/core' {
  interface BerthConfig extends DomainSettings {}
}
