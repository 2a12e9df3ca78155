// licenseKey.* — the peer's licence router, answered as an instance where every feature is on and
// no key is needed: haveValidLicenseKey is true for every member, and a key given to activate is
// accepted and not kept (nothing changes: there is nothing to unlock). As with the peer, the calls
// that manage a key are its admins' and owner's (the peer's adminProcedure); every member asks
// whether the licence is valid. Nothing of an organization is read or written.
import { Type, router } from '@berth/core';
import { ActivateInput, EnterpriseSettings, EnterpriseSettingsInput, Success } from './schemas.ts';

const licenseKey = router('licenseKey', 'organization');
const done = () => ({ success: true });

export const licenseKeyProcedures = [
  licenseKey.mutation('activate', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'Accepted and changes nothing: every feature is on without a key, so the key is not kept (answers {success: true})',
    input: ActivateInput,
    output: Success,
    handler: done,
  }),
  licenseKey.mutation('validate', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'true: every feature is on, with or without a key (the peer asks its licence server; Berth has none to ask)',
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: () => true,
  }),
  licenseKey.mutation('deactivate', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'Accepted and changes nothing: no key is kept, and every feature stays on (answers {success: true})',
    input: Type.Object({}),
    output: Success,
    handler: done,
  }),
  licenseKey.query('getEnterpriseSettings', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'The peer\'s enterprise settings as an instance where every feature is on: {enableEnterpriseFeatures: true, licenseKey: ""} (no key is needed or kept)',
    input: Type.Object({}),
    output: EnterpriseSettings,
    handler: () => ({ enableEnterpriseFeatures: true, licenseKey: '' }),
  }),
  licenseKey.query('haveValidLicenseKey', {
    permission: 'member',
    summary: 'true for every member: every feature is on, no key is needed',
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: () => true,
  }),
  licenseKey.mutation('updateEnterpriseSettings', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'Accepted and changes nothing: every feature stays on whatever enableEnterpriseFeatures says (answers true)',
    input: EnterpriseSettingsInput,
    output: Type.Boolean(),
    handler: () => true,
  }),
];
