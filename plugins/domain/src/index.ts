// The domain plugin: domains, redirects and basic-auth users of workloads, served by the active
// proxy provider (config `proxy`, env BERTH_PROXY), uploaded certificates, the proxy settings
// operations and the domain preflight.
import { asClass, asValue, ConfigError, definePlugin, ownerColumn } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { CertificateRequests } from './certificate-requests.ts';
import { CertificateService, EXPIRY_JOB } from './certificate-service.ts';
import { DomainRequests } from './domain-requests.ts';
import { DomainService } from './domain-service.ts';
import { ProxyRecordDirectory } from './directory.ts';
import { Domain, domainEntities, Redirect, Security } from './entities.ts';
import { domainMigrations } from './migrations.ts';
import { DomainPreflight } from './preflight.ts';
import { domainProcedures } from './procedures.ts';
import { RedirectRequests } from './redirect-requests.ts';
import { RedirectService } from './redirect-service.ts';
import { ProxyRouting } from './routing.ts';
import { SecurityRequests } from './security-requests.ts';
import { AccessLog } from './access-log.ts';
import { accessLogProcedures } from './access-log-procedures.ts';
import { SecurityService } from './security-service.ts';
import { ServerAddress } from './server-address.ts';
import { proxySettingsProcedures } from './settings-procedures.ts';
import { ProxySettings } from './settings-service.ts';
import { WorkloadOwners } from './workload-owner.ts';

export default definePlugin({
  name: 'domain',
  version: pkg.version,
  config,
  dependencies: ['workloads'],
  uses: ['server'], // used when enabled (optionalService)
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const { proxy } = berth.config;
    if (proxy !== 'none' && !cradle().providers.has('proxy', proxy)) {
      const enabled = cradle().providers.ids('proxy');
      throw new ConfigError(`Invalid configuration: proxy (BERTH_PROXY) is "${proxy}", which is not an enabled proxy provider (enabled: ${enabled.length ? enabled.join(', ') : 'none'}; or "none")`);
    }
    const routing = new ProxyRouting(cradle);
    const owners = new WorkloadOwners(cradle);
    const domains = new DomainService({ routing, owners, cradle });
    const redirects = new RedirectService();
    const security = new SecurityService({ secrets: () => cradle().secrets });
    const certificates = new CertificateService({ routing, cradle });
    const preflight = new DomainPreflight(cradle);
    const settings = new ProxySettings({ routing, owners, cradle });
    const accessLog = new AccessLog({ routing, settings });
    berth.entities(...domainEntities);
    berth.migrations(...domainMigrations);
    // A member given some services reaches a domain, redirect or basic-auth user through its workload.
    berth.recordOwners({
      domainId: { what: 'Domain', owner: ownerColumn(Domain, 'domainId', 'serviceId') },
      redirectId: { what: 'Redirect', owner: ownerColumn(Redirect, 'redirectId', 'serviceId') },
      securityId: { what: 'Security', owner: ownerColumn(Security, 'securityId', 'serviceId') },
    });
    berth.provide({
      domains: asValue(new ProxyRecordDirectory({ routing, domains, redirects, security })),
      proxyRouting: asValue(routing),
      serverProxies: asValue({ ensure: async (serverId: string) => (await routing.ensure(serverId))?.id ?? null }),
      domainService: asValue(domains),
      redirectService: asValue(redirects),
      securityService: asValue(security),
      certificateService: asValue(certificates),
      accessLog: asValue(accessLog),
      domainRequests: asClass(DomainRequests).scoped(),
      redirectRequests: asClass(RedirectRequests).scoped(),
      securityRequests: asClass(SecurityRequests).scoped(),
      certificateRequests: asClass(CertificateRequests).scoped(),
    });
    // The port the API really listens on (port 0 in the config = chosen at listen time).
    let server: { address(): unknown } | null = null;
    berth.http(app => void (server = app.server));
    const listening = () => {
      const address = server?.address() as { port?: number } | null | undefined;
      return address?.port ?? berth.config.port;
    };
    berth.procedures(...domainProcedures({ domains, preflight, routing }), ...proxySettingsProcedures(settings, listening, new ServerAddress(berth.config)), ...accessLogProcedures(accessLog));
    berth.jobs.define(EXPIRY_JOB, async () => void (await certificates.checkExpiries(cradle().orm.em.fork())));
    if (berth.config.jobs) berth.jobs.every('1 day', EXPIRY_JOB);
  },
});

export * from './exports.ts';
