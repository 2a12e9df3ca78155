// The custom-role plugin: customRole.*, an organization's own roles. A role is a statement of the
// resources and actions of core/src/permissions.ts; a member holding it may call every procedure
// whose declared permission it names (the transport checks, core/src/transport/permission-check.ts).
import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { customRoleProcedures } from './procedures.ts';
import { CustomRoles } from './service.ts';

export default definePlugin({
  name: 'custom-role',
  version: pkg.version,
  setup(berth) {
    berth.provide({ customRoles: asClass(CustomRoles).scoped() });
    berth.procedures(...customRoleProcedures);
  },
});
