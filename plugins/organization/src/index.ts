import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { invitationProcedures, organizationProcedures } from './procedures.ts';
import { OrganizationService } from './organizations.ts';

export default definePlugin({
  name: 'organization',
  version: pkg.version,
  // A member's role is changed through the user plugin's service (organization.updateMemberRole).
  dependencies: ['user'],
  uses: ['notification'], // used when enabled (optionalService): user.sendInvitation mails through a channel
  setup(berth) {
    berth.provide({ organizations: asClass(OrganizationService).singleton() });
    berth.procedures(...organizationProcedures, ...invitationProcedures);
  },
});
