// The single sign-on plugin: sso.* and settings.updateEnforceSSO, the sign-in routes of OIDC and
// SAML providers, and the policy that refuses password logins where an organization enforces SSO.
import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { ssoEntities, SsoProvider, SsoSettings } from './entities.ts';
import { SsoFlows } from './flows.ts';
import { ssoMigrations } from './migrations.ts';
import { ssoProcedures } from './procedures.ts';
import { ssoRoutes } from './routes.ts';
import { EnforcedSsoPolicy, SsoAdmin } from './service.ts';

export default definePlugin({
  name: 'sso',
  version: pkg.version,
  setup(berth) {
    berth.entities(...ssoEntities);
    berth.migrations(...ssoMigrations);
    const flows = new SsoFlows(berth.container.cradle);
    berth.provide({ ssoAdmin: asClass(SsoAdmin).scoped(), ssoFlows: asValue(flows), passwordLoginPolicy: asValue(new EnforcedSsoPolicy(berth.container.cradle)) });
    berth.events.onDurable('organizationRemoved', async ({ organizationId }, em) => {
      await em.nativeDelete(SsoProvider, { organizationId });
      await em.nativeDelete(SsoSettings, { organizationId });
    });
    berth.procedures(...ssoProcedures);
    berth.http(ssoRoutes(flows));
  },
});
