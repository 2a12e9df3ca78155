// The forward-auth plugin: forwardAuth.*, a domain served only to signed-in members of its
// organization through the active proxy's forward auth, Berth answering the checks (raw routes) and
// its sign-in page on an auth domain per proxy. The domain plugin routes; this plugin fills its gate.
import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { forwardAuthEntities } from './entities.ts';
import { forwardAuthMigrations } from './migrations.ts';
import { forwardAuthProcedures } from './procedures.ts';
import { ForwardAuthRequests } from './requests.ts';
import { forwardAuthRoutes } from './routes.ts';
import { ForwardAuth } from './service.ts';

export default definePlugin({
  name: 'forward-auth',
  version: pkg.version,
  dependencies: ['domain', 'workloads'],
  uses: ['server'], // its servers' list (serverStatus) and owners, when enabled
  setup(berth) {
    // The port the API really listens on (port 0 in the config = chosen at listen time): the proxy asks it.
    let server: { address(): unknown } | null = null;
    const port = () => (server?.address() as { port?: number } | null | undefined)?.port ?? berth.config.port;
    const service = new ForwardAuth(() => berth.container.cradle, port);
    berth.entities(...forwardAuthEntities);
    berth.migrations(...forwardAuthMigrations);
    berth.provide({ forwardAuth: asValue(service), forwardAuthRequests: asClass(ForwardAuthRequests).scoped() });
    berth.container.cradle.proxyRouting.gateWith(service.gate);
    berth.procedures(...forwardAuthProcedures);
    berth.http(app => void (server = app.server));
    berth.http(forwardAuthRoutes(berth, service));
  },
});
