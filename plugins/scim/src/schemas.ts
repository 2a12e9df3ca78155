// scim.*'s inputs and answers, as the peer's: a provider id is lowercase letters, digits and dashes.
import { Type, type Static } from '@berth/core';

export const ProviderId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9][a-z0-9-]*$',
  description: 'the name the organization gives its identity provider: lowercase letters, digits and dashes',
});

export const ProviderInput = Type.Object({ providerId: ProviderId });
export type ProviderInput = Static<typeof ProviderInput>;

export const GeneratedToken = Type.Object({
  scimToken: Type.String({ description: 'the bearer token the identity provider sends to /scim/v2: shown once, stored hashed' }),
  providerId: Type.String(),
});

export const ProviderView = Type.Object({ id: Type.String(), providerId: Type.String(), organizationId: Type.String() });
export type ProviderView = Static<typeof ProviderView>;

export const Success = Type.Object({ success: Type.Boolean({ description: 'true when done' }) });
