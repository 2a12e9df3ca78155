// What licenseKey.* takes and answers: the peer's inputs and answers (its router at v0.30.2).
import { Type, schema } from '@berth/core';

export const ActivateInput = Type.Object({ licenseKey: schema.NonEmpty({ maxLength: 1024, description: 'accepted and not kept: every feature is on without a key' }) });

export const EnterpriseSettingsInput = Type.Object({ enableEnterpriseFeatures: Type.Optional(Type.Boolean({ description: 'accepted and not kept: every feature stays on' })) });

/** getEnterpriseSettings: the peer's owner row's flag and key. */
export const EnterpriseSettings = Type.Object({
  enableEnterpriseFeatures: Type.Boolean({ description: 'always true: every feature is on' }),
  licenseKey: Type.String({ description: 'always "": no key is needed, none is kept' }),
});

/** What the peer's activate and deactivate answer. */
export const Success = Type.Object({ success: Type.Boolean({ description: 'true: accepted (nothing changes)' }) });
