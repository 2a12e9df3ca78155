import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { organizationProcedures } from './procedures.ts';
import { OrganizationService } from './organizations.ts';

export default definePlugin({
  name: 'organization',
  version: pkg.version,
  // A member's role is changed through the user plugin's service (organization.updateMemberRole).
  dependencies: ['user'],
  setup(berth) {
    berth.provide({ organizations: asClass(OrganizationService).singleton() });
    berth.procedures(...organizationProcedures);
  },
});
