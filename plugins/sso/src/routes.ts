// The sign-in routes (raw: a browser follows them, no credential): the start, which sends the
// caller to the identity provider, and the provider's two answers, the OIDC redirect and the SAML
// POST to the assertion consumer service. A signed-in answer is a Berth session: its token in the
// callbackURL's fragment (a trusted origin) or in the JSON answer, and in the berth_session cookie.
import type { BerthHost } from '@berth/core';
import type { SignedInAnswer, SsoFlows } from './flows.ts';

const SESSION_COOKIE = 'berth_session';
const SESSION_MAX_AGE = 30 * 24 * 3600;
const FORM_LIMIT = 1024 * 1024;

type Request = Parameters<BerthHost['authenticate']>[0];

const originOf = (req: Request) => `${req.protocol}://${req.host}`;
const param = (req: Request) => (req.params as { providerId: string }).providerId;
/** The session as the berth_session cookie (forward auth reads the same one). */
const sessionCookie = (req: Request, answer: SignedInAnswer) =>
  `${SESSION_COOKIE}=${answer.token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_MAX_AGE}${req.protocol === 'https' ? '; Secure' : ''}`;
const answerBody = (answer: SignedInAnswer) => ({ token: answer.token, userId: answer.userId, organizationId: answer.organizationId });

export const ssoRoutes =
  (flows: SsoFlows): Parameters<BerthHost['http']>[0] =>
  app => {
    // The ACS takes the SAML binding's form; any other body is read as text and refused for what it lacks.
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => done(null, body));
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => done(null, body));

    app.get('/api/sso/:providerId/sign-in', { schema: { hide: true } }, async (req, reply) => {
      const { callbackURL } = req.query as { callbackURL?: unknown };
      const target = await flows.start(param(req), typeof callbackURL === 'string' && callbackURL ? callbackURL : undefined, originOf(req));
      return reply.header('cache-control', 'no-store').redirect(target, 302);
    });

    app.get('/api/sso/callback/:providerId', { schema: { hide: true } }, async (req, reply) => {
      const answer = await flows.oidcCallback(param(req), new URL(req.url, originOf(req)));
      void reply.header('set-cookie', sessionCookie(req, answer)).header('cache-control', 'no-store');
      return answer.redirect ? reply.redirect(answer.redirect, 302) : reply.send(answerBody(answer));
    });

    app.post('/api/sso/saml2/callback/:providerId', { schema: { hide: true } }, async (req, reply) => {
      const body = typeof req.body === 'string' ? req.body : '';
      const answer = await flows.samlCallback(param(req), new URLSearchParams(body), originOf(req));
      void reply.header('set-cookie', sessionCookie(req, answer)).header('cache-control', 'no-store');
      return answer.redirect ? reply.redirect(answer.redirect, 302) : reply.send(answerBody(answer));
    });
  };
