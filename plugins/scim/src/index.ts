// The SCIM plugin: scim.* (an organization's SCIM providers and their bearer tokens) and the SCIM 2.0
// service at /scim/v2, where an identity provider provisions and deprovisions the organization's
// members (Users) and their roles (Groups).
import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { ScimDirectory } from './directory.ts';
import { scimEntities } from './entities.ts';
import { scimMigrations } from './migrations.ts';
import { scimProcedures } from './procedures.ts';
import { scimRoutes } from './routes.ts';
import { ScimProviders } from './service.ts';

export default definePlugin({
  name: 'scim',
  version: pkg.version,
  setup(berth) {
    const cradle = () => berth.container.cradle;
    berth.entities(...scimEntities);
    berth.migrations(...scimMigrations);
    berth.provide({ scimProviders: asValue(new ScimProviders()) });
    berth.procedures(...scimProcedures);
    berth.http(scimRoutes(berth.config, cradle, new ScimDirectory(cradle)));
  },
});
