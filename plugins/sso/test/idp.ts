// The identity providers the sso test signs in through, on loopback: a real OpenID provider
// (oidc-provider, its development login and consent pages driven as a browser would) and a SAML
// identity provider whose responses are signed by xml-crypto (the library node-saml checks with).
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import Provider from 'oidc-provider';
import { SignedXml } from 'xml-crypto';

export interface OpenIdProvider {
  issuer: string;
  jwksUrl: string;
  close(): Promise<void>;
}

/** A real OpenID provider on 127.0.0.1 with one client, its accounts any e-mail (the login is the address). */
export async function startOpenIdProvider(...clients: { clientId: string; clientSecret: string; redirectUris: string[] }[]): Promise<OpenIdProvider> {
  const server = http.createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: randomBytes(6).toString('hex'), use: 'sig', alg: 'RS256' };
  const provider = new Provider(issuer, {
    clients: clients.map(client => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: client.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    jwks: { keys: [jwk as never] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, email: id, email_verified: true, name: 'Jane Doe' }) }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => void handle(req, res));
  return { issuer, jwksUrl: `${issuer}/jwks`, close: () => new Promise<void>(resolve => server.close(() => resolve())) };
}

/**
 * A token-substitution attacker between Berth and the provider: the authorization and token
 * requests Berth makes as one client are passed on as another client's, so the ID token Berth gets
 * is real, signed by the provider, and issued to someone else (its audience is the other client).
 */
export async function startClientSwap(issuer: string, other: { clientId: string; clientSecret: string }): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/auth') {
      url.searchParams.set('client_id', other.clientId);
      res.writeHead(302, { location: `${issuer}/auth${url.search}` }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      form.set('client_id', other.clientId);
      form.set('client_secret', other.clientSecret);
      void fetch(`${issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }).then(async answer =>
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text()),
      );
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>(resolve => server.close(() => resolve())) };
}

/**
 * Follows a sign-in from Berth's start URL through the provider's login and consent pages as a
 * browser would (cookies kept, forms posted), up to the provider's redirect back to `until`.
 */
export async function browseToCallback(start: string, login: string, until: string): Promise<string> {
  const jar = new Map<string, string>();
  const cookies = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  };
  let url = start;
  let init: RequestInit = {};
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(until)) return url;
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookies() } });
    keep(res);
    init = {};
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url).href;
      continue;
    }
    const page = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (res.status !== 200 || !action) throw new Error(`the provider answered ${res.status}: ${page.slice(0, 300)}`);
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    const form: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'any' } : { prompt: prompt ?? 'consent' };
    url = new URL(action, url).href;
    init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() };
  }
  throw new Error('the sign-in did not come back');
}

export interface SamlIdentityProvider {
  entityId: string;
  entryPoint: string;
  /** The certificate (here its public key, PEM) Berth checks signatures with. */
  cert: string;
  /** A signed (or, with `sign: false`, unsigned) response to the AuthnRequest in `redirect` (Berth's 302 to the IdP). */
  respond(redirect: string, o: { email: string; acs: string; audience: string; sign?: boolean; key?: KeyObject; expired?: boolean }): { SAMLResponse: string; RelayState: string };
}

/** A SAML identity provider: it reads Berth's AuthnRequest and answers the assertion a real IdP would. */
export function samlIdentityProvider(): SamlIdentityProvider & { otherKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const entityId = 'http://127.0.0.1:9/saml/idp';
  return {
    entityId,
    entryPoint: 'http://127.0.0.1:9/saml/sso',
    cert: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    otherKey: other,
    respond(redirect, o) {
      const url = new URL(redirect);
      const request = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString();
      const requestId = /ID="([^"]+)"/.exec(request)![1]!;
      const now = Date.now();
      const at = (ms: number) => new Date(now + ms).toISOString();
      const until = o.expired ? at(-10 * 60_000) : at(5 * 60_000);
      const since = o.expired ? at(-20 * 60_000) : at(-60_000);
      const xml =
        `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomBytes(8).toString('hex')}" Version="2.0" IssueInstant="${at(0)}" Destination="${o.acs}" InResponseTo="${requestId}">` +
        `<saml:Issuer>${entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
        `<saml:Assertion ID="_a${randomBytes(8).toString('hex')}" Version="2.0" IssueInstant="${since}"><saml:Issuer>${entityId}</saml:Issuer>` +
        `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${o.email}</saml:NameID>` +
        `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${requestId}" NotOnOrAfter="${until}" Recipient="${o.acs}"/></saml:SubjectConfirmation></saml:Subject>` +
        `<saml:Conditions NotBefore="${since}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${o.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
        `<saml:AuthnStatement AuthnInstant="${since}" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
        `<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${o.email}</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>` +
        `</saml:Assertion></samlp:Response>`;
      let out = xml;
      if (o.sign !== false) {
        const sig = new SignedXml({
          privateKey: (o.key ?? privateKey).export({ type: 'pkcs8', format: 'pem' }),
          signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
          canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
        });
        sig.addReference({
          xpath: "//*[local-name(.)='Assertion']",
          transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
          digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
        });
        sig.computeSignature(xml, { location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
        out = sig.getSignedXml();
      }
      return { SAMLResponse: Buffer.from(out).toString('base64'), RelayState: url.searchParams.get('RelayState')! };
    },
  };
}
