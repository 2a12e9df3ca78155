// The sign-in flows: Berth as an OpenID Connect relying party (openid-client: authorization code
// with PKCE; the library checks the ID token's signature against the provider's keys, its issuer,
// audience, expiry and nonce) and as a SAML 2.0 service provider (@node-saml/node-saml: the
// assertion's signature against the provider's certificate, its audience, its time window and
// that it answers a request Berth made). Both libraries are imported on the first sign-in. Every
// call to an identity provider goes through the outbound guard. What a sign-in keeps between its
// start and the provider's answer (state, nonce, PKCE verifier, SAML request id) stays in this
// process, for 10 minutes, and is taken once.
import { randomBytes } from 'node:crypto';
import { BerthError, badRequest, forbidden, newId, notFound, unauthorized, vendorMessage, type Cradle, type EntityManager } from '@berth/core';
import { CustomRole, Member, User } from '@berth/core';
import { SsoProvider } from './entities.ts';
import { openConfig, originOf, settingsOf } from './service.ts';
import type { OidcConfig, SamlConfig } from './schemas.ts';

type ProviderRow = InstanceType<typeof SsoProvider.class>;
const PENDING_TTL = 10 * 60 * 1000;
const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MAX_PENDING = 10_000;

interface Pending {
  providerId: string;
  callbackURL: string | null;
  /** OIDC: the PKCE verifier and nonce. */
  codeVerifier?: string;
  nonce?: string;
  expires: number;
}

/** Who signed in, as the provider vouches. */
interface Asserted {
  email: string;
  name: string;
}

export interface SignedInAnswer {
  token: string;
  userId: string;
  organizationId: string;
  /** Where to send the caller (callbackURL with the token in its fragment), or null to answer the token. */
  redirect: string | null;
}

export class SsoFlows {
  readonly #cradle: Cradle;
  readonly #pending = new Map<string, Pending>();
  /** SAML request ids Berth issued (node-saml's InResponseTo check reads them here). */
  readonly #samlRequests = new Map<string, { value: string; createdAt: number }>();

  constructor(cradle: Cradle) {
    this.#cradle = cradle;
  }

  /** Where the caller goes to sign in with `providerId`: the provider's authorization or SSO URL. */
  async start(providerId: string, callbackURL: string | undefined, origin: string): Promise<string> {
    const em = this.#em();
    const provider = await this.#provider(em, providerId);
    if (!provider) throw notFound('SSO provider');
    const target = callbackURL ? await this.#trustedCallback(em, provider, callbackURL) : null;
    const state = randomBytes(32).toString('base64url');
    const pending: Pending = { providerId, callbackURL: target, expires: Date.now() + PENDING_TTL };
    const oidc = openConfig<OidcConfig>(this.#cradle.secrets, provider.oidcConfig);
    if (oidc) {
      const client = await import('openid-client');
      const config = await this.#oidcConfiguration(provider, oidc);
      pending.codeVerifier = client.randomPKCECodeVerifier();
      pending.nonce = client.randomNonce();
      this.#keep(state, pending);
      return client.buildAuthorizationUrl(config, {
        redirect_uri: `${origin}/api/sso/callback/${encodeURIComponent(providerId)}`,
        scope: (oidc.scopes?.length ? oidc.scopes : ['openid', 'email', 'profile']).join(' '),
        code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce: pending.nonce,
      }).href;
    }
    const saml = await this.#saml(provider, origin);
    this.#keep(state, pending);
    return saml.getAuthorizeUrlAsync(state, undefined, {});
  }

  /** The OIDC provider's answer (the redirect to /api/sso/callback/:providerId): a Berth session. */
  async oidcCallback(providerId: string, currentUrl: URL): Promise<SignedInAnswer> {
    const state = currentUrl.searchParams.get('state') ?? '';
    const pending = this.#take(state, providerId);
    const em = this.#em();
    const provider = await this.#provider(em, providerId);
    const oidc = provider && openConfig<OidcConfig>(this.#cradle.secrets, provider.oidcConfig);
    if (!provider || !oidc) throw notFound('SSO provider');
    const error = currentUrl.searchParams.get('error');
    if (error) throw unauthorized(`The identity provider refused the sign-in: ${vendorMessage(currentUrl.searchParams.get('error_description') ?? error, 200)}`);
    const client = await import('openid-client');
    const config = await this.#oidcConfiguration(provider, oidc);
    let claims: Record<string, unknown>;
    let accessToken: string;
    try {
      const tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: pending.codeVerifier, expectedState: state, expectedNonce: pending.nonce, idTokenExpected: true });
      claims = tokens.claims() ?? {};
      accessToken = tokens.access_token;
    } catch (e) {
      throw this.#refused(e);
    }
    const mapping = oidc.mapping;
    let email = claims[mapping?.email ?? 'email'];
    let name = claims[mapping?.name ?? 'name'];
    if (typeof email !== 'string') {
      try {
        const info = (await client.fetchUserInfo(config, accessToken, String(claims.sub))) as Record<string, unknown>;
        email = info[mapping?.email ?? 'email'];
        name ??= info[mapping?.name ?? 'name'];
      } catch (e) {
        throw this.#refused(e);
      }
    }
    if (claims[mapping?.emailVerified ?? 'email_verified'] === false) throw forbidden('The identity provider has not verified this e-mail address');
    return this.#signIn(em, provider, pending, { email: typeof email === 'string' ? email : '', name: typeof name === 'string' ? name : '' });
  }

  /** The SAML provider's answer (a POST to the ACS /api/sso/saml2/callback/:providerId): a Berth session. */
  async samlCallback(providerId: string, form: URLSearchParams, origin: string): Promise<SignedInAnswer> {
    const samlResponse = form.get('SAMLResponse');
    if (!samlResponse) throw badRequest('SAMLResponse: missing', [{ path: ['SAMLResponse'], message: 'SAMLResponse: missing' }]);
    const pending = this.#take(form.get('RelayState') ?? '', providerId);
    const em = this.#em();
    const provider = await this.#provider(em, providerId);
    const config = provider && openConfig<SamlConfig>(this.#cradle.secrets, provider.samlConfig);
    if (!provider || !config) throw notFound('SSO provider');
    const saml = await this.#saml(provider, origin);
    let profile: Record<string, unknown> | null;
    try {
      ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (e) {
      throw this.#refused(e);
    }
    if (!profile) throw unauthorized('The SAML response signs nobody in');
    const pick = (key: string | undefined) => (key && typeof profile[key] === 'string' ? (profile[key] as string) : undefined);
    const email = pick(config.mapping?.email) ?? pick('email') ?? pick('mail') ?? pick('nameID') ?? '';
    const name = pick(config.mapping?.name) ?? pick('displayName') ?? pick('name') ?? '';
    return this.#signIn(em, provider, pending, { email, name });
  }

  /** 400 unless `callbackURL` is an http(s) URL on one of the provider's organization's trusted origins. */
  async #trustedCallback(em: EntityManager, provider: ProviderRow, callbackURL: string): Promise<string> {
    const origin = originOf(callbackURL, 'callbackURL');
    const { trustedOrigins } = await settingsOf(em, provider.organizationId);
    if (!trustedOrigins.includes(origin))
      throw badRequest(`callbackURL: ${origin} is not a trusted origin of the organization (sso.addTrustedOrigin)`, [
        { path: ['callbackURL'], message: `callbackURL: ${origin} is not a trusted origin` },
      ]);
    return new URL(callbackURL).href;
  }

  /**
   * The user the provider vouches for, in the provider's organization: a member found by e-mail, or
   * (an address of one of the provider's domains, unknown to Berth) a new account made a member
   * with the provider's default role. An account of the instance that is no member of the organization is
   * refused: an organization's provider never signs in another organization's users.
   */
  async #signIn(em: EntityManager, provider: ProviderRow, pending: Pending, who: Asserted): Promise<SignedInAnswer> {
    const email = who.email.trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) throw unauthorized('The identity provider gave no e-mail address');
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (!provider.domain.split(',').includes(domain)) throw forbidden(`This provider signs in addresses of ${provider.domain.split(',').join(', ') || 'no domain'}, not of ${domain}`);
    let user = await em.findOne(User, { email });
    if (user) {
      if (!(await em.count(Member, { userId: user.id, organizationId: provider.organizationId })))
        throw forbidden("This account is no member of the provider's organization: an admin of it invites it first");
    } else {
      const [firstName = '', ...rest] = who.name.trim().split(/\s+/);
      user = em.create(User, {
        id: newId(),
        email,
        passwordHash: null,
        firstName: firstName.slice(0, 255),
        lastName: rest.join(' ').slice(0, 255),
        image: null,
        defaultOrganizationId: provider.organizationId,
        createdAt: new Date(),
      } as any);
      em.create(Member, { id: newId(), userId: user.id, organizationId: provider.organizationId, role: await this.#roleOfNewMember(em, provider), createdAt: new Date() });
      await em.flush();
      this.#cradle.sessions.invalidate();
    }
    const signed = await this.#cradle.sessions.signIn(user.id, 'session', provider.organizationId);
    const redirect = pending.callbackURL ? `${pending.callbackURL.split('#')[0]}#token=${encodeURIComponent(signed.token!)}` : null;
    return { token: signed.token!, userId: user.id, organizationId: provider.organizationId, redirect };
  }

  /** The provider's default role, while it is one: a custom role renamed or removed since gives member (the least). */
  async #roleOfNewMember(em: EntityManager, provider: ProviderRow): Promise<string> {
    const role = provider.defaultRole;
    if (role === 'member' || role === 'admin') return role;
    return (await em.count(CustomRole, { organizationId: provider.organizationId, role })) ? role : 'member';
  }

  async #oidcConfiguration(provider: ProviderRow, oidc: OidcConfig) {
    const client = await import('openid-client');
    const outbound = this.#cradle.outbound;
    const request = { field: 'issuer', organizationId: provider.organizationId };
    const guarded = outbound.fetch(request);
    // cast: the library's fetch options (a plain headers record, its body types) are a subset of RequestInit
    const fetch: import('openid-client').CustomFetch = (url, init) => guarded(url, init as RequestInit);
    // http only where the operator lists the provider's address (a provider on a private network or loopback).
    const insecure = new URL(provider.issuer).protocol === 'http:';
    if (insecure) {
      const url = new URL(provider.issuer);
      const address = await outbound.check(provider.issuer, request);
      if (!outbound.listedAddress(address.address, url.port || '80')) throw forbidden('issuer: an http:// identity provider is used only where the operator lists its address in outboundAllow');
    }
    const auth = oidc.tokenEndpointAuthentication === 'client_secret_basic' ? client.ClientSecretBasic(oidc.clientSecret) : client.ClientSecretPost(oidc.clientSecret);
    const options = { [client.customFetch]: fetch, ...(insecure ? { execute: [client.allowInsecureRequests] } : {}) };
    let config;
    try {
      const discovered = await client.discovery(new URL(oidc.discoveryEndpoint ?? provider.issuer), oidc.clientId, undefined, auth, options);
      const server = { ...discovered.serverMetadata() };
      if (oidc.authorizationEndpoint) server.authorization_endpoint = oidc.authorizationEndpoint;
      if (oidc.tokenEndpoint) server.token_endpoint = oidc.tokenEndpoint;
      if (oidc.userInfoEndpoint) server.userinfo_endpoint = oidc.userInfoEndpoint;
      if (oidc.jwksEndpoint) server.jwks_uri = oidc.jwksEndpoint;
      config = new client.Configuration(server, oidc.clientId, { [client.clockSkew]: Math.round((this.#cradle.clock.now() - Date.now()) / 1000) }, auth);
    } catch (e) {
      throw this.#refused(e, 'The identity provider could not be reached');
    }
    config[client.customFetch] = fetch;
    if (insecure) client.allowInsecureRequests(config);
    // The ID token's signature is checked against the provider's keys even when it comes straight from the token endpoint.
    client.enableNonRepudiationChecks(config);
    return config;
  }

  async #saml(provider: ProviderRow, origin: string) {
    const config = openConfig<SamlConfig>(this.#cradle.secrets, provider.samlConfig);
    if (!config) throw notFound('SSO provider');
    const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml');
    const requests = this.#samlRequests;
    const spEntityId = config.spMetadata.entityID ?? `${origin}/api/sso/saml2/sp/${provider.providerId}`;
    return new SAML({
      callbackUrl: `${origin}/api/sso/saml2/callback/${encodeURIComponent(provider.providerId)}`,
      entryPoint: config.entryPoint,
      issuer: spEntityId,
      idpIssuer: config.idpMetadata?.entityID ?? provider.issuer,
      idpCert: config.cert,
      audience: config.audience ?? spEntityId,
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: 0,
      maxAssertionAgeMs: 0,
      identifierFormat: config.identifierFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      disableRequestedAuthnContext: true,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: PENDING_TTL,
      cacheProvider: {
        saveAsync: async (key: string, value: string) => {
          if (requests.size >= MAX_PENDING) requests.delete(requests.keys().next().value!);
          const item = { value, createdAt: Date.now() };
          requests.set(key, item);
          return item;
        },
        getAsync: async (key: string) => {
          const item = requests.get(key);
          return item && item.createdAt + PENDING_TTL > Date.now() ? item.value : null;
        },
        removeAsync: async (key: string | null) => {
          const item = key ? requests.get(key) : undefined;
          if (key) requests.delete(key);
          return item?.value ?? null;
        },
      },
    });
  }

  #keep(state: string, pending: Pending): void {
    const now = Date.now();
    for (const [k, p] of this.#pending) if (p.expires <= now) this.#pending.delete(k);
    if (this.#pending.size >= MAX_PENDING) this.#pending.delete(this.#pending.keys().next().value!);
    this.#pending.set(state, pending);
  }

  /** The sign-in `state` names, taken (a second answer with it is refused). */
  #take(state: string, providerId: string): Pending {
    const pending = state ? this.#pending.get(state) : undefined;
    if (pending) this.#pending.delete(state);
    if (!pending || pending.expires <= Date.now() || pending.providerId !== providerId)
      throw badRequest('state: no sign-in in progress with this state (unknown, expired or already used): start again', [{ path: ['state'], message: 'state: unknown, expired or already used' }]);
    return pending;
  }

  /** A library's refusal of what the provider answered, as a 401 naming why (never a 500). */
  #refused(e: unknown, lead = 'The identity provider’s answer was refused'): Error {
    if (e instanceof BerthError) return e;
    type Cause = { cause?: Cause; claim?: unknown };
    const claim = (e as Cause)?.cause?.claim ?? (e as Cause)?.cause?.cause?.claim;
    return unauthorized(`${lead}: ${vendorMessage((e as Error)?.message) ?? 'invalid'}${typeof claim === 'string' ? ` (${claim})` : ''}`);
  }

  /** The provider a sign-in URL names (null for a name no provider can have). */
  async #provider(em: EntityManager, providerId: string): Promise<ProviderRow | null> {
    return PROVIDER_ID.test(providerId) ? em.findOne(SsoProvider, { providerId }) : null;
  }

  #em(): EntityManager {
    return this.#cradle.orm.em.fork() as EntityManager;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The OIDC and SAML sign-in flows (the sso plugin's raw routes). */
    ssoFlows: SsoFlows;
  }
}
