// /scim/v2 (RFC 7644): the discovery documents, Users and Groups, for an identity provider with a
// token of scim.generateToken (Authorization: Bearer). The token is checked before the body is read;
// bodies are JSON (application/scim+json or application/json, 1 MB at most); every answer is
// application/scim+json, a refusal in the SCIM error schema ({schemas, status, scimType, detail}).
// Kept out of the OpenAPI document: SCIM describes itself at /scim/v2/Schemas and /ResourceTypes.
import { BerthError, type BerthConfig, type BerthHost, type Cradle, type EntityManager } from '@berth/core';
import { discovery, MAX_PAYLOAD, SCHEMA, serviceProviderConfig } from './discovery.ts';
import type { ScimDirectory, ListQuery } from './directory.ts';
import { ScimRefusal } from './errors.ts';

export const SCIM_PREFIX = '/scim/v2';

// Fastify's types as the kernel hands them over (no plugin depends on fastify itself).
type FastifyInstance = Parameters<Parameters<BerthHost['http']>[0]>[0];
type FastifyRequest = Parameters<BerthHost['authenticate']>[0];
interface FastifyReply {
  code(status: number): FastifyReply;
  type(contentType: string): FastifyReply;
  header(name: string, value: string): FastifyReply;
  send(body?: unknown): unknown;
}
type FastifyError = Error & { statusCode?: number };

const STATUS: Record<string, number> = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404, CONFLICT: 409, PAYLOAD_TOO_LARGE: 413, UNSUPPORTED_MEDIA_TYPE: 415 };
const CONTENT_TYPE = 'application/scim+json; charset=utf-8';

const send = (reply: FastifyReply, status: number, body: unknown) => reply.code(status).type(CONTENT_TYPE).send(JSON.stringify(body));

/** A refusal in the SCIM error schema; anything unexpected a 500 with no detail but the log's. */
function scimError(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  let status = 500;
  let detail = 'Internal server error';
  let scimType: string | undefined;
  if (err instanceof BerthError && STATUS[err.code]) {
    status = STATUS[err.code]!;
    detail = err.issues[0]?.message ?? err.message;
    if (err instanceof ScimRefusal) scimType = err.scimType;
  } else if (err.name === 'UniqueConstraintViolationException') {
    // Two requests provisioning the same user at once: the second finds it taken.
    status = 409;
    scimType = 'uniqueness';
    detail = 'userName: the user was provisioned by another request just now';
  } else if (typeof (err as FastifyError).statusCode === 'number' && (err as FastifyError).statusCode! >= 400 && (err as FastifyError).statusCode! < 500) {
    // Fastify's own refusals of the body: too large, a content type it takes none of, malformed JSON.
    status = (err as FastifyError).statusCode!;
    detail = err.message;
    if (status === 400) scimType = 'invalidSyntax';
  } else {
    req.log.error({ err }, 'SCIM request failed');
  }
  if (status === 401) void reply.header('www-authenticate', 'Bearer realm="scim"');
  return send(reply, status, { schemas: [SCHEMA.error], status: String(status), ...(scimType ? { scimType } : {}), detail });
}

/** JSON as SCIM sends it; a body that is not JSON is a 400 invalidSyntax. */
function parseJson(_req: FastifyRequest, body: string | Buffer, done: (err: Error | null, value?: unknown) => void) {
  const text = body.toString();
  if (!text.trim()) return done(null, undefined);
  try {
    done(null, JSON.parse(text));
  } catch (e) {
    done(Object.assign(new Error(`body: malformed JSON (${(e as Error).message.slice(0, 100)})`), { statusCode: 400 }));
  }
}

export function scimRoutes(config: BerthConfig, cradle: () => Cradle, directory: ScimDirectory) {
  return async (app: FastifyInstance) => {
    await app.register(
      async scope => {
        const organizationOf = new WeakMap<FastifyRequest, string>();
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser(['application/scim+json', 'application/json'], { parseAs: 'string', bodyLimit: MAX_PAYLOAD }, parseJson);
        scope.setErrorHandler(scimError);
        scope.setNotFoundHandler((req, reply) => send(reply, 404, { schemas: [SCHEMA.error], status: '404', detail: `No SCIM endpoint ${req.method} ${req.url.split('?')[0]}` }));
        // The token once the body is read (at most MAX_PAYLOAD, as every raw route reads its body before
        // its signature): a check that waits on the database before reading left an oversized upload
        // stalled in the socket, and the 413 then closed on a client still writing (EPIPE).
        scope.addHook('preValidation', async req => {
          const header = req.headers.authorization;
          const token = typeof header === 'string' && /^bearer /i.test(header) ? header.slice(7).trim() : '';
          const organizationId = token ? await cradle().scimProviders.organizationOf(token, cradle().orm.em.fork() as EntityManager) : null;
          if (!organizationId) throw Object.assign(new Error('A SCIM bearer token of scim.generateToken is required (Authorization: Bearer <token>)'), { statusCode: 401 });
          organizationOf.set(req, organizationId);
        });
        const org = (req: FastifyRequest) => organizationOf.get(req)!;
        const base = (req: FastifyRequest) => `${config.publicUrl?.replace(/\/+$/, '') ?? `${req.protocol}://${req.host}`}${SCIM_PREFIX}`;
        const query = (req: FastifyRequest) => (req.query ?? {}) as ListQuery;
        const id = (req: FastifyRequest, name: 'userId' | 'groupId') => (req.params as Record<string, string>)[name]!;
        const hidden = { schema: { hide: true } };

        scope.get('/ServiceProviderConfig', hidden, async (req, reply) => send(reply, 200, serviceProviderConfig(base(req))));
        scope.get('/ResourceTypes', hidden, async (req, reply) => send(reply, 200, discovery.resourceTypes(base(req))));
        scope.get('/ResourceTypes/:resourceTypeId', hidden, async (req, reply) => {
          const found = discovery.resourceType(base(req), (req.params as { resourceTypeId: string }).resourceTypeId);
          return found ? send(reply, 200, found) : send(reply, 404, { schemas: [SCHEMA.error], status: '404', detail: 'No such resource type (User, Group)' });
        });
        scope.get('/Schemas', hidden, async (req, reply) => send(reply, 200, discovery.schemas(base(req))));
        scope.get('/Schemas/:schemaId', hidden, async (req, reply) => {
          const found = discovery.schema(base(req), (req.params as { schemaId: string }).schemaId);
          return found ? send(reply, 200, found) : send(reply, 404, { schemas: [SCHEMA.error], status: '404', detail: 'No such schema' });
        });

        scope.get('/Users', hidden, async (req, reply) => send(reply, 200, await directory.listUsers(org(req), base(req), query(req))));
        scope.post('/Users', hidden, async (req, reply) => {
          const user = await directory.createUser(org(req), base(req), req.body);
          void reply.header('location', user.meta.location);
          return send(reply, 201, user);
        });
        scope.get('/Users/:userId', hidden, async (req, reply) => send(reply, 200, await directory.getUser(org(req), base(req), id(req, 'userId'))));
        scope.put('/Users/:userId', hidden, async (req, reply) => send(reply, 200, await directory.replaceUser(org(req), base(req), id(req, 'userId'), req.body)));
        scope.patch('/Users/:userId', hidden, async (req, reply) => send(reply, 200, await directory.patchUser(org(req), base(req), id(req, 'userId'), req.body)));
        scope.delete('/Users/:userId', hidden, async (req, reply) => {
          await directory.deleteUser(org(req), id(req, 'userId'));
          return reply.code(204).send();
        });

        scope.get('/Groups', hidden, async (req, reply) => send(reply, 200, await directory.listGroups(org(req), base(req), query(req))));
        scope.post('/Groups', hidden, async req => directory.createGroup(org(req), req.body));
        scope.get('/Groups/:groupId', hidden, async (req, reply) => send(reply, 200, await directory.getGroup(org(req), base(req), id(req, 'groupId'))));
        scope.put('/Groups/:groupId', hidden, async (req, reply) => send(reply, 200, await directory.replaceGroup(org(req), base(req), id(req, 'groupId'), req.body)));
        scope.patch('/Groups/:groupId', hidden, async (req, reply) => send(reply, 200, await directory.patchGroup(org(req), base(req), id(req, 'groupId'), req.body)));
        scope.delete('/Groups/:groupId', hidden, async req => directory.deleteGroup(org(req), id(req, 'groupId')));
      },
      { prefix: SCIM_PREFIX },
    );
  };
}
