// The raw routes forward auth needs (a proxy's question and a browser's form are no procedures):
//   GET  /api/forward-auth/verify?domainId=…  the proxy's check, with the original request's headers:
//        2xx with Remote-User/Remote-Email/Remote-Role for a signed-in member of the domain's
//        organization (of its role), else 302 to the sign-in page for a browser (Accept text/html)
//        or 401; 403 for someone signed in who is not let in. The domain comes from the URI Berth
//        wrote into the proxy's configuration, never from a header the client sets.
//   GET  /api/forward-auth/sign-in?rd=…       the sign-in form, on an auth domain only;
//   POST /api/forward-auth/sign-in            e-mail and password (the accounts' own check, its login
//        guard and two-factor: a second form takes the code), then the session cookie and a 303 back
//        to rd when rd is a guarded domain of one of the user's organizations (no open redirect).
import { BerthError, type BerthHost, type EntityManager } from '@berth/core';
import { PREFIX, type ForwardAuth } from './service.ts';

const FORM_LIMIT = 16 * 1024;
const ID = /^[A-Za-z0-9_-]{1,64}$/;

type FastifyRequest = Parameters<BerthHost['authenticate']>[0];
/** What the handlers use of Fastify's reply. */
interface FastifyReply {
  code(status: number): FastifyReply;
  header(name: string, value: string): FastifyReply;
  send(body?: unknown): FastifyReply;
}
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const escape = (s: string) => s.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`);
const header = (req: FastifyRequest, name: string) => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};
/** A form field: a string within its bound, holding no NUL and no lone surrogate (the database stores neither); else undefined. */
const field = (body: unknown, name: string, max: number): string | undefined => {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' && v.length <= max && !v.includes('\0') && !LONE_SURROGATE.test(v) ? v : undefined;
};

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escape(title)}</title>` +
        `<style>body{font-family:sans-serif;max-width:22rem;margin:4rem auto}label,input,button{display:block;width:100%;margin:.4rem 0}</style></head>` +
        `<body><h1>${escape(title)}</h1>${body}</body></html>`,
    );
}

const notice = (message: string | undefined) => (message ? `<p role="alert">${escape(message)}</p>` : '');
const passwordForm = (rd: string, message?: string) =>
  `${notice(message)}<form method="post" action="${PREFIX}/sign-in"><input type="hidden" name="rd" value="${escape(rd)}">` +
  `<label>E-mail<input name="email" type="email" autocomplete="username" required></label>` +
  `<label>Password<input name="password" type="password" autocomplete="current-password" required></label><button>Sign in</button></form>`;
const codeForm = (rd: string, pending: string, message?: string) =>
  `${notice(message)}<form method="post" action="${PREFIX}/sign-in"><input type="hidden" name="rd" value="${escape(rd)}"><input type="hidden" name="pending" value="${escape(pending)}">` +
  `<label>Two-factor code (or a recovery code)<input name="code" autocomplete="one-time-code" inputmode="numeric" required></label><button>Verify</button></form>`;

export const forwardAuthRoutes =
  (berth: BerthHost, forwardAuth: ForwardAuth): Parameters<BerthHost['http']>[0] =>
  app => {
    const em = () => berth.container.cradle.orm.em.fork() as EntityManager;
    // The sign-in form posts urlencoded (a JSON body is read the same way); other types are 415.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    /** The auth domain this request came to (its Host), or a 404 page. */
    const authDomainOf = async (req: FastifyRequest, e: EntityManager) => forwardAuth.byAuthDomain(req.hostname ?? '', e);

    app.get(`${PREFIX}/verify`, { schema: { hide: true } }, async (req, reply) => {
      const domainId = (req.query as Record<string, unknown>).domainId;
      if (typeof domainId !== 'string' || !ID.test(domainId))
        throw new BerthError('BAD_REQUEST', 'domainId: the guarded domain, as the proxy names it', [{ path: ['domainId'], message: 'domainId: a domain id' }]);
      const verdict = await forwardAuth.verify(domainId, { cookie: header(req, 'cookie'), proto: header(req, 'x-forwarded-proto'), uri: header(req, 'x-forwarded-uri') }, em());
      reply.header('cache-control', 'no-store');
      if (verdict.allowed) {
        for (const [k, v] of Object.entries(verdict.headers)) reply.header(k, v);
        return reply.code(200).send('');
      }
      if (verdict.why === 'unknown-domain') throw new BerthError('NOT_FOUND', 'No domain with forward auth on has this id', []);
      const browser = /text\/html/i.test(header(req, 'accept') ?? '');
      if (verdict.why === 'not-signed-in') {
        if (browser && verdict.signIn) return reply.code(302).header('location', verdict.signIn).send('');
        return reply
          .code(401)
          .header('www-authenticate', 'Cookie realm="berth"')
          .send({ code: 'UNAUTHORIZED', message: `Sign in first${verdict.signIn ? `: ${verdict.signIn}` : ''}`, issues: [] });
      }
      const why = verdict.why === 'role' ? 'Your role in the organization this domain belongs to is not enough for it' : 'You are not a member of the organization this domain belongs to';
      if (browser) return page(reply, 403, 'Not allowed', `<p>${escape(why)}.</p>${verdict.signIn ? `<p><a href="${escape(verdict.signIn)}">Sign in as someone else</a></p>` : ''}`);
      return reply.code(403).send({ code: 'FORBIDDEN', message: why, issues: [] });
    });

    app.get(`${PREFIX}/sign-in`, { schema: { hide: true } }, async (req, reply) => {
      const settings = await authDomainOf(req, em());
      if (!settings) return page(reply, 404, 'Not found', '<p>This host is no authentication domain of Berth.</p>');
      const rd = field(req.query, 'rd', 4096) ?? '';
      return page(reply, 200, 'Sign in', passwordForm(rd));
    });

    app.post(`${PREFIX}/sign-in`, { schema: { hide: true }, bodyLimit: FORM_LIMIT }, async (req, reply) => {
      const e = em();
      const settings = await authDomainOf(req, e);
      if (!settings) return page(reply, 404, 'Not found', '<p>This host is no authentication domain of Berth.</p>');
      const rd = field(req.body, 'rd', 4096) ?? '';
      const pending = field(req.body, 'pending', 256);
      const code = field(req.body, 'code', 64);
      const email = field(req.body, 'email', 255);
      const password = field(req.body, 'password', 1024);
      const { sessions } = berth.container.cradle;
      let signed;
      try {
        if (pending !== undefined && code !== undefined) signed = await sessions.verifyLogin2FA(pending, code, req.ip);
        else if (email && password) signed = await sessions.login(email, password, req.ip);
        else return page(reply, 400, 'Sign in', passwordForm(rd, 'Give your e-mail and password.'));
      } catch (err) {
        if (!(err instanceof BerthError)) throw err;
        const status = err.code === 'TOO_MANY_REQUESTS' ? 429 : err.code === 'UNAUTHORIZED' ? 401 : err.code === 'FORBIDDEN' ? 403 : 400;
        if (err.retryAfterSeconds) reply.header('retry-after', String(err.retryAfterSeconds));
        return page(reply, status, 'Sign in', pending !== undefined && err.code !== 'TOO_MANY_REQUESTS' && code !== undefined ? codeForm(rd, pending, err.message) : passwordForm(rd, err.message));
      }
      if (!signed.token) return page(reply, 200, 'Two-factor code', codeForm(rd, signed.id));
      reply.header('set-cookie', forwardAuth.sessionCookie(signed.token, settings));
      const back = await forwardAuth.returnTo(rd, signed.user.userId, e);
      if (back) return reply.code(303).header('location', back).header('cache-control', 'no-store').send('');
      return page(reply, 200, 'Signed in', '<p>You are signed in. Open the address you were going to again.</p>');
    });
  };
