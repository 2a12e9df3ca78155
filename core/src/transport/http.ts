// Mounts every registered procedure on its transports:
//   GET|POST /api/<router>.<procedure>   (REST form, documented in OpenAPI)
//   /api/trpc/<path>[,<path>...]         (tRPC wire form, with batching)
import { asFunction, asValue } from 'awilix';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BerthContainer } from '../container.ts';
import { BerthError, errorStatus, forbidden, notFound, unauthorized } from '../errors.ts';
import { actsOnInstance, type Principal, type Procedure, type ProcedureContext, type ProcedureRegistry, type UploadedFile } from '../procedure.ts';
import { outputErrors, parseInput } from '../validation.ts';
import { emptyStringFields } from '../empty-strings.ts';
import { dataError, errorBody, toBerthError } from './errors.ts';
import { callContext } from '../audit/capture.ts';
import { acceptMultipart, fileMissing, isMultipart, readUpload, removeUpload, uploadCap } from './multipart.ts';
import { assertPermitted, assertReaches, type RecordOwners } from './permission-check.ts';

export interface TransportOptions {
  registry: ProcedureRegistry;
  container: BerthContainer;
  checkResponses: boolean;
  /** The sub-records' owners the plugins declared, checked for a member given records one by one. */
  recordOwners: RecordOwners;
}

/** Headers a reverse proxy adds: a request carrying one did not come from this machine, whatever the socket says. */
const FORWARDING = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip'];

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** x-api-key (current variant) or Authorization: Bearer (older). */
export function credentials(req: FastifyRequest) {
  const apiKey = header(req, 'x-api-key')?.trim() || undefined;
  const auth = header(req, 'authorization');
  const bearer = auth && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '').trim() || undefined : undefined;
  return { apiKey, bearer };
}

export function mountProcedures(app: FastifyInstance, { registry, container, checkResponses, recordOwners }: TransportOptions): void {
  const sessions = container.cradle.sessions;
  const orm = container.cradle.orm;
  const accounts = container.cradle.accounts;
  const config = container.cradle.config;
  const audit = container.cradle.audit;

  /** FORBIDDEN unless the caller is an instance operator (docs/security.md). */
  async function assertInstanceOperator(principal: Principal, field?: string): Promise<void> {
    if (await accounts.isInstanceOperator(principal)) return;
    throw forbidden(
      field
        ? `Without ${field} this acts on Berth's own machine, which only the instance's operators (the owner and admins of its first organization) may: give ${field}, a server of your organization`
        : "This acts on Berth's own machine (its engine, swarm or proxy): only the instance's operators (the owner and admins of its first organization) may",
    );
  }

  /** Runs one procedure; `headers` receives the response headers it sets. */
  async function call(proc: Procedure, req: FastifyRequest, raw: unknown, coerce: boolean, headers: Record<string, string>): Promise<unknown> {
    const { apiKey, bearer } = credentials(req);
    let principal: Principal | null;
    try {
      principal = await sessions.authenticate(apiKey, bearer);
    } catch (e) {
      // A stale token must not stop someone from logging in again.
      if (proc.scope !== 'public') throw e;
      principal = null;
    }
    if (proc.scope !== 'public') {
      if (!principal) throw unauthorized();
      if (proc.access === 'admin' && principal.role === 'member') throw forbidden();
      // This machine's: refused before the input is read, so nothing of the call is judged for a stranger.
      if (proc.scope === 'instance') await assertInstanceOperator(principal);
      assertPermitted(proc, principal);
    }
    let file: UploadedFile | undefined;
    // An upload is read only past the scope's checks: nothing of a refused caller's reaches the disk.
    if (proc.multipart && isMultipart(req)) {
      const upload = await readUpload(req, proc.multipart, uploadCap(proc.multipart, config.uploadLimit), config.dataDir);
      [raw, coerce, file] = [upload.fields, true, upload.file];
    }
    try {
      return await run(proc, req, raw, coerce, headers, principal, file);
    } finally {
      // The upload lasts as long as the call: its handler may read it to the end, whatever the client does meanwhile.
      if (file) await removeUpload(file);
    }
  }

  /** The call past its caller's checks: its input judged, its handler run in a request scope of its own. */
  async function run(
    proc: Procedure,
    req: FastifyRequest,
    raw: unknown,
    coerce: boolean,
    headers: Record<string, string>,
    principal: Principal | null,
    file: UploadedFile | undefined,
    audited = false,
  ): Promise<unknown> {
    // A mutation runs in its audit context: its entry commits with its change, or records its failure.
    if (proc.kind === 'mutation' && !audited)
      return audit.run(
        callContext({ requestId: req.id, procedure: proc.path, principal, raw, address: req.socket.remoteAddress, userAgent: header(req, 'user-agent') }),
        () => run(proc, req, raw, coerce, headers, principal, file, true),
        toBerthError,
      );
    const input = parseInput(proc.input, raw, coerce, emptyStringFields(proc.path));
    if (proc.multipart && !file) throw fileMissing(proc.multipart);
    if (principal && typeof proc.scope === 'object' && actsOnInstance(proc.scope, input)) await assertInstanceOperator(principal, proc.scope.host);
    if (principal && proc.scope !== 'public') await assertReaches(principal, input, recordOwners, () => orm.em.fork());
    const scope = container.createScope();
    scope.register({ em: asFunction(() => orm.em.fork()).scoped(), principal: asValue(principal) });
    const ctx: ProcedureContext = {
      get principal() {
        if (!principal) throw unauthorized();
        return principal;
      },
      maybePrincipal: principal,
      cradle: scope.cradle,
      scope,
      origin: `${req.protocol}://${req.host}`,
      requestId: req.id,
      remote: { address: req.socket.remoteAddress, forwarded: FORWARDING.some(h => req.headers[h] !== undefined) },
      file,
      setHeader(name, value) {
        if (!proc.headers?.[name]) throw new Error(`${proc.path} sets the undeclared header ${name}`);
        headers[name] = value;
      },
    };
    try {
      const result =
        (await Promise.resolve(proc.handler(input, ctx)).catch(e => {
          throw dataError(e, input) ?? e;
        })) ?? null;
      if (checkResponses) {
        const issues = outputErrors(proc.output, result);
        if (issues.length) {
          req.log.error({ procedure: proc.path, issues }, 'reply does not match the declared output schema');
          throw new BerthError('INTERNAL_SERVER_ERROR', `Reply of ${proc.path} does not match its output schema`, issues);
        }
      }
      return result;
    } finally {
      await scope.dispose();
    }
  }

  const mount = (app: FastifyInstance, proc: Procedure) => {
    const url = `/api/${proc.path}`;
    const inputKey = proc.kind === 'query' ? 'querystring' : 'body';
    const schema = {
      operationId: `${proc.router}-${proc.name}`,
      tags: [proc.router],
      summary: proc.summary,
      description: proc.description,
      ...(proc.scope === 'public' ? { security: [] } : {}),
      'x-berth-scope': proc.scope,
      // What a member needs to call it (core/src/permissions.ts); owners and admins hold every permission.
      ...(proc.scope === 'public' ? {} : { 'x-berth-permission': proc.permission, ...(proc.access === 'admin' ? { 'x-berth-access': 'admin' } : {}) }),
      [inputKey]: proc.multipart ? withFile(proc.input, proc.multipart.fileField) : proc.input,
      ...(proc.multipart ? { consumes: ['multipart/form-data'] } : {}),
      response: { 200: proc.headers ? { ...proc.output, headers: declaredHeaders(proc.headers) } : proc.output },
    };
    const noCompile = { validatorCompiler: () => () => true, serializerCompiler: () => (data: unknown) => JSON.stringify(data) };
    // Every answer is JSON, a string too: Fastify sends a bare string as it is (text/plain, unquoted).
    const answer = async (req: FastifyRequest, reply: FastifyReply, raw: unknown, coerce: boolean) => {
      const headers: Record<string, string> = {};
      const value = await call(proc, req, raw, coerce, headers);
      reply.headers(headers);
      if (typeof value !== 'string') return value;
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(value));
    };
    if (proc.kind === 'query') {
      app.get(url, { schema, ...noCompile }, (req, reply) => answer(req, reply, req.query, true));
      // Some clients POST reads; accept it, keep it out of the document.
      app.post(url, { schema: { hide: true }, ...noCompile }, (req, reply) => answer(req, reply, req.body, false));
    } else {
      app.post(url, { schema, ...noCompile }, (req, reply) => answer(req, reply, req.body, false));
    }
  };

  // tRPC: one route; the path may name several procedures (?batch=1). An upload's has a route of its own.
  const trpc = (only?: string) => async (req: FastifyRequest<{ Params: { '*'?: string }; Querystring: { input?: string; batch?: string } }>, reply: FastifyReply) => {
    const paths = (only ?? req.params['*'] ?? '').split(',');
    const batch = req.query.batch === '1' || req.query.batch === 'true';
    let inputs: unknown[];
    try {
      const rawInput = req.method === 'GET' ? (req.query.input === undefined ? undefined : JSON.parse(req.query.input)) : req.body;
      inputs = batch ? paths.map((_, i) => (rawInput as Record<string, unknown> | undefined)?.[i]) : [rawInput];
    } catch {
      throw new BerthError('BAD_REQUEST', 'Malformed JSON in the input parameter');
    }
    const outcomes = await Promise.all(
      paths.map(async (path, i) => {
        const proc = registry.get(path);
        try {
          if (!proc) throw notFound(`Operation ${path}`);
          if (req.method === 'GET' && proc.kind === 'mutation') throw new BerthError('BAD_REQUEST', `${path} is a mutation: use POST`);
          const headers: Record<string, string> = {};
          const data = await call(proc, req, unwrapJson(inputs[i]), false, headers);
          // A batch answers one set of headers: each procedure's are added (the same name: the last one's).
          reply.headers(headers);
          return { status: 200, body: { result: { data: { json: data } } } };
        } catch (e) {
          const err = toBerthError(e);
          if (err.code === 'INTERNAL_SERVER_ERROR') req.log.error({ err: e }, 'unexpected error');
          if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
          return { status: errorStatus[err.code], body: errorBody(err, path) };
        }
      }),
    );
    if (!batch) {
      reply.status(outcomes[0]!.status);
      return outcomes[0]!.body;
    }
    const statuses = new Set(outcomes.map(o => o.status));
    reply.status(statuses.size === 1 ? outcomes[0]!.status : 207);
    return outcomes.map(o => o.body);
  };
  // The routes in the registry's order (the document's, which the document-wide suites walk), in
  // scopes registered one after another: an upload's (both forms) in one of its own, the only kind
  // that parses multipart bodies.
  const runs: Procedure[][] = [];
  for (const proc of registry.all()) {
    const last = runs.at(-1);
    if (last && !last[0]!.multipart === !proc.multipart) last.push(proc);
    else runs.push([proc]);
  }
  for (const run of runs)
    void app.register(async scope => {
      if (run[0]!.multipart) acceptMultipart(scope);
      for (const proc of run) {
        mount(scope, proc);
        if (proc.multipart) scope.post(`/api/trpc/${proc.path}`, { schema: { hide: true } }, trpc(proc.path));
      }
    });
  app.get('/api/trpc/*', { schema: { hide: true } }, trpc());
  app.post('/api/trpc/*', { schema: { hide: true } }, trpc());
}

/** An upload's input as the document shows it: the form's fields and its file. */
const withFile = (input: Procedure['input'], field: string) => ({
  ...input,
  properties: { ...(input as { properties?: object }).properties, [field]: { type: 'string', format: 'binary' } },
  required: [...((input as { required?: string[] }).required ?? []), field],
});

/** A procedure's response headers as the OpenAPI document declares them. */
const declaredHeaders = (headers: Readonly<Record<string, string>>) => Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, { type: 'string', description }]));

/** tRPC clients wrap inputs as {"json": …} (superjson); plain clients do not. */
function unwrapJson(input: unknown): unknown {
  if (input && typeof input === 'object' && !Array.isArray(input) && 'json' in input) {
    const keys = Object.keys(input);
    if (keys.every(k => k === 'json' || k === 'meta')) return (input as { json: unknown }).json;
  }
  return input;
}
