// The peer's SSO shapes (its ssoProviderBodySchema, field for field), bounded where it leaves them
// open: a provider id is a short token (it stands in Berth's sign-in URLs), URLs are http(s), texts
// and PEM certificates have a length limit.
import { Type, schema, type Static } from '@berth/core';

const { Nullable } = schema;

const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });
const Url = (description: string) => Type.String({ format: 'uri', maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://', description: `${description}: an http:// or https:// URL` });
const Pem = (description: string) => Type.String({ maxLength: 65_536, description });

export const ProviderId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description: 'the provider’s id, chosen at registration: letters, digits, ".", "_" and "-"',
});

const OidcMapping = Type.Object({
  id: Text(255, 'the claim holding the user’s id'),
  email: Text(255, 'the claim holding the e-mail address'),
  emailVerified: Type.Optional(Text(255, 'the claim saying the e-mail is verified')),
  name: Text(255, 'the claim holding the name'),
  image: Type.Optional(Text(255, 'the claim holding a picture URL')),
  extraFields: Type.Optional(Type.Record(Type.String({ maxLength: 255 }), Type.Any(), { description: 'further claims to keep (accepted, unused)' })),
});

export const OidcConfig = Type.Object({
  clientId: Text(1024, 'the client id Berth has at the provider'),
  clientSecret: Text(4096, 'the client secret (stored sealed, answered masked)'),
  authorizationEndpoint: Type.Optional(Url('the authorization endpoint, in place of the discovered one')),
  tokenEndpoint: Type.Optional(Url('the token endpoint, in place of the discovered one')),
  userInfoEndpoint: Type.Optional(Url('the userinfo endpoint, in place of the discovered one')),
  tokenEndpointAuthentication: Type.Optional(
    Type.Union([Type.Literal('client_secret_post'), Type.Literal('client_secret_basic')], { description: 'how the client authenticates at the token endpoint' }),
  ),
  jwksEndpoint: Type.Optional(Url('the key set signing ID tokens, in place of the discovered one')),
  discoveryEndpoint: Type.Optional(Url('the discovery document (default: the issuer’s /.well-known/openid-configuration)')),
  skipDiscovery: Type.Optional(Type.Boolean({ description: 'accepted; Berth always reads the discovery document' })),
  scopes: Type.Optional(Type.Array(Text(255, 'a scope'), { maxItems: 50, description: 'the scopes asked (default openid email profile)' })),
  pkce: Type.Optional(Type.Boolean({ default: true, description: 'accepted; Berth always uses PKCE (S256)' })),
  mapping: Type.Optional(OidcMapping),
});
export type OidcConfig = Static<typeof OidcConfig>;

const Metadata = (who: string) => ({
  metadata: Type.Optional(Pem(`the ${who}'s metadata XML`)),
  entityID: Type.Optional(Text(1024, `the ${who}'s entity id`)),
  privateKey: Type.Optional(Pem(`the ${who}'s private key (stored sealed)`)),
  privateKeyPass: Type.Optional(Text(1024, 'its passphrase (stored sealed)')),
  isAssertionEncrypted: Type.Optional(Type.Boolean()),
  encPrivateKey: Type.Optional(Pem('the decryption key (stored sealed)')),
  encPrivateKeyPass: Type.Optional(Text(1024, 'its passphrase (stored sealed)')),
});

export const SamlConfig = Type.Object({
  entryPoint: Url('the identity provider’s single sign-on URL'),
  cert: Pem('the identity provider’s signing certificate (PEM or base64)'),
  callbackUrl: Text(2048, 'the peer’s ACS URL (Berth’s own is /api/sso/saml2/callback/<providerId>)'),
  audience: Type.Optional(Text(1024, 'the audience assertions must name (default: the SP entity id)')),
  idpMetadata: Type.Optional(
    Type.Object({
      ...Metadata('identity provider'),
      cert: Type.Optional(Pem('the identity provider’s certificate')),
      singleSignOnService: Type.Optional(Type.Array(Type.Object({ Binding: Text(1024, 'the binding'), Location: Text(2048, 'the URL') }), { maxItems: 20 })),
    }),
  ),
  spMetadata: Type.Object({ ...Metadata('service provider'), binding: Type.Optional(Text(1024, 'the binding')) }),
  wantAssertionsSigned: Type.Optional(Type.Boolean({ description: 'accepted; Berth always requires signed assertions' })),
  authnRequestsSigned: Type.Optional(Type.Boolean()),
  signatureAlgorithm: Type.Optional(Text(255, 'the signature algorithm')),
  digestAlgorithm: Type.Optional(Text(255, 'the digest algorithm')),
  identifierFormat: Type.Optional(Text(1024, 'the NameID format asked')),
  privateKey: Type.Optional(Pem('the SP’s private key (stored sealed)')),
  decryptionPvk: Type.Optional(Pem('the SP’s decryption key (stored sealed)')),
  additionalParams: Type.Optional(Type.Record(Type.String({ maxLength: 255 }), Type.Any())),
  mapping: Type.Optional(
    Type.Object({
      id: Text(255, 'the attribute holding the user’s id'),
      email: Text(255, 'the attribute holding the e-mail address'),
      emailVerified: Type.Optional(Text(255, 'the attribute saying it is verified')),
      name: Text(255, 'the attribute holding the name'),
      firstName: Type.Optional(Text(255, 'the attribute holding the first name')),
      lastName: Type.Optional(Text(255, 'the attribute holding the last name')),
      extraFields: Type.Optional(Type.Record(Type.String({ maxLength: 255 }), Type.Any())),
    }),
  ),
});
export type SamlConfig = Static<typeof SamlConfig>;

/** Berth's addition: the role of the people the provider brings in (just-in-time members). */
const DefaultRole = Type.String({
  minLength: 1,
  maxLength: 50,
  description:
    "Berth's: the role a person signing in through this provider for the first time gets as a new member — member (the default), admin, or the name of one of the organization's custom roles (customRole.*); never owner. A custom role renamed or removed later: new people get member",
});

export const ProviderInput = Type.Object({
  providerId: ProviderId,
  issuer: Url('the identity provider’s issuer (OIDC) or entity id URL (SAML)'),
  domains: Type.Array(Type.String({ maxLength: 253, description: 'an e-mail domain this provider signs in, e.g. example.com' }), { maxItems: 100 }),
  oidcConfig: Type.Optional(OidcConfig),
  samlConfig: Type.Optional(SamlConfig),
  organizationId: Type.Optional(Type.String({ maxLength: 64, description: 'the caller’s organization (a provider is always its organization’s; another one is not found)' })),
  overrideUserInfo: Type.Optional(Type.Boolean({ default: false, description: 'accepted; a known user’s name is not changed by a sign-in' })),
  defaultRole: Type.Optional(DefaultRole),
});
export type ProviderInput = Static<typeof ProviderInput>;

export const ProviderView = Type.Object({
  id: Type.String(),
  providerId: Type.String(),
  issuer: Type.String(),
  domain: Type.String({ description: 'its e-mail domains, comma-separated' }),
  oidcConfig: Nullable(Type.String({ description: 'the OIDC configuration as JSON text, its secrets masked' })),
  samlConfig: Nullable(Type.String({ description: 'the SAML configuration as JSON text, its keys masked' })),
  organizationId: Type.String(),
  defaultRole: Type.String({ description: "Berth's: the role its just-in-time members get (member, admin or a custom role's name)" }),
});
export type ProviderView = Static<typeof ProviderView>;

export const ProviderRef = Type.Object({ providerId: Type.String({ minLength: 1, maxLength: 128 }) });
export const Origin = Type.String({ format: 'uri', minLength: 1, maxLength: 2048, description: 'an http(s) origin, e.g. https://app.example.com' });
export const Success = Type.Object({ success: Type.Boolean({ description: 'true when done' }) });
