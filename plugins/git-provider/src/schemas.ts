// What gitProvider.* takes and answers, in the peer's field names (each forge's records: its
// connection form, forge-procedures.ts). No answer carries a secret.
import { Type, schema, type Static } from '@berth/core';

const { NonEmpty, Timestamp } = schema;
const Id = NonEmpty({ maxLength: 255 });

export const GitProviderView = Type.Object({
  gitProviderId: Type.String(),
  name: Type.String(),
  providerType: Type.String({ description: 'the forge: github, gitlab, bitbucket, gitea or another enabled one' }),
  createdAt: Timestamp(),
  organizationId: Type.String(),
  userId: Type.String(),
  sharedWithOrganization: Type.Boolean(),
});
export type GitProviderView = Static<typeof GitProviderView>;

/** gitProvider.getAll: each connection and whether the caller owns it (with, under each forge's name, its record: procedures.ts). */
export const GitProviderListed = Type.Object({ ...GitProviderView.properties, isOwner: Type.Boolean() });
export type GitProviderListed = Static<typeof GitProviderListed> & Record<string, unknown>;

export const GitProviderIdInput = Type.Object({ gitProviderId: Id });
export const ToggleShareInput = Type.Object({ gitProviderId: Id, sharedWithOrganization: Type.Boolean() });
