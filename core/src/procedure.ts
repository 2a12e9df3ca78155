// A procedure is what a plugin declares: a name, a kind, TypeBox input and output schemas
// and a handler. The kernel mounts it on every transport; handlers never see Fastify.
import type { Static, TSchema } from 'typebox';
import type { AwilixContainer } from 'awilix';
import type { Cradle } from './container.ts';
import { isNeed, type Grants, type Need } from './permissions.ts';

/** Which members of the caller's organization may call: any member, or its admins and owner. */
export type Access = 'member' | 'admin';
/** The built-in role a member's rights start from: a custom role's holder is a `member` here. */
export type Role = 'owner' | 'admin' | 'member';

/**
 * What a procedure acts on, and so who may call it (docs/security.md states the rule):
 * - `organization`: the caller's organization's records and servers — its members (`access` may
 *   narrow to admins); the services find every record in the caller's organization;
 * - `instance`: this machine, its engine, swarm or proxy — only the instance operators, the owner
 *   and admins of the instance's organization (the first admin's);
 * - `public`: anyone, signed in or not (each such procedure says what it checks instead);
 * - `{ host: field }`: a host — the server the input field names (organization scope: the service
 *   finds it in the caller's organization), or this machine when the field is absent, empty, null
 *   or "none" (instance scope).
 * The transport enforces it before the handler runs. The governance work refines it with the
 * resource and action a procedure needs; it never widens a scope.
 */
export type Scope = 'organization' | 'instance' | 'public' | HostScope;
export interface HostScope {
  /** The input field naming the server acted on; absent, empty, null or "none": this machine. */
  readonly host: string;
}

export interface Principal {
  userId: string;
  /** The organization every read and write of this request is confined to. */
  organizationId: string;
  /** The built-in role (a custom role's holder: `member`). */
  role: Role;
  /** The role's name, switches and records, which decide each procedure's declared permission. */
  grants: Grants;
  via: 'apiKey' | 'session';
  /** The session or API key record that authenticated the call. */
  credentialId: string;
}

export interface ProcedureContext {
  /** The caller; throws UNAUTHORIZED when the procedure is public and nobody signed in. */
  readonly principal: Principal;
  /** The caller, or null on a public procedure called without credentials. */
  readonly maybePrincipal: Principal | null;
  /** The request-scoped container: services, the request's entity manager. */
  readonly cradle: Cradle;
  readonly scope: AwilixContainer<Cradle>;
  /** The instance address as the caller reached it, e.g. http://host:3000 */
  readonly origin: string;
  readonly requestId: string;
  /** The socket's peer address and whether a proxy relayed the request. */
  readonly remote: RequestOrigin;
  /** Sets a response header the procedure declares in `headers` (any other name is a programming error). */
  setHeader(name: string, value: string): void;
  /** The file of a procedure that declares `multipart`: always there when its handler runs (the transport refuses a call without one). */
  readonly file?: UploadedFile;
}

/**
 * An upload: the input comes as multipart/form-data (on both wire forms), its fields as the input
 * (text, converted as a query string's are) and one file, streamed to a temporary file that is
 * removed once the answer is sent. A JSON body is still accepted, and refused for lack of the file.
 */
export interface MultipartSpec {
  /** The form field that carries the file. */
  readonly fileField: string;
  /** The largest file this procedure takes, in bytes; the kernel's `uploadLimit` caps every upload whatever this says. */
  readonly maxBytes?: number;
}

/** An uploaded file as the handler sees it. */
export interface UploadedFile {
  /** The name the client gave it (untrusted: check it before it names anything). */
  readonly filename: string;
  readonly mimetype: string;
  /** Where it is on this machine while the request lasts. */
  readonly path: string;
  readonly bytes: number;
}

export interface Procedure<I extends TSchema = TSchema, O extends TSchema = TSchema> {
  /** `<router>.<name>`, as it appears in the URL. */
  readonly path: string;
  readonly router: string;
  readonly name: string;
  /** query = GET, mutation = POST. */
  readonly kind: 'query' | 'mutation';
  readonly input: I;
  readonly output: O;
  /** What it acts on: who may call it. */
  readonly scope: Scope;
  /** Which members of the caller's organization may call it (not read for a public procedure). */
  readonly access: Access;
  /** The permission a member needs to call it (core/src/permissions.ts; not read for a public procedure). */
  readonly permission: Need;
  readonly summary?: string;
  readonly description?: string;
  /** Response headers the procedure may set, by lower-case name, with what they carry (documented in OpenAPI). */
  readonly headers?: Readonly<Record<string, string>>;
  /** An upload: the input comes as multipart/form-data with one file (mutations only). */
  readonly multipart?: MultipartSpec;
  readonly handler: (input: Static<I>, ctx: ProcedureContext) => Promise<Static<O>> | Static<O>;
}

type ProcedureSpec<I extends TSchema, O extends TSchema> = {
  input: I;
  output: O;
  /** The router's scope unless the procedure states its own. */
  scope?: Scope;
  access?: Access;
  /** The permission it needs: `<resource>.<action>`, or `member` for every member (a public procedure needs none). */
  permission?: Need;
  summary?: string;
  description?: string;
  headers?: Record<string, string>;
  multipart?: MultipartSpec;
  handler: (input: Static<I>, ctx: ProcedureContext) => Promise<Static<O>> | Static<O>;
};

/**
 * Builds the procedures of one router with their input types inferred. `scope` is what the
 * router's procedures act on unless one states its own: each plugin's router declares it.
 */
export function router(routerName: string, scope: Scope) {
  const make =
    (kind: 'query' | 'mutation') =>
    <I extends TSchema, O extends TSchema>(name: string, spec: ProcedureSpec<I, O>): Procedure<I, O> =>
      ({ path: `${routerName}.${name}`, router: routerName, name, kind, access: spec.access ?? 'member', ...spec, scope: spec.scope ?? scope }) as Procedure<I, O>;
  return { query: make('query'), mutation: make('mutation') };
}

/** True when `scope` is one of the declared forms (a third party's plugin may be plain JavaScript). */
export function isScope(scope: unknown): scope is Scope {
  if (scope === 'organization' || scope === 'instance' || scope === 'public') return true;
  return typeof scope === 'object' && scope !== null && typeof (scope as HostScope).host === 'string' && (scope as HostScope).host.length > 0;
}

/** Whether a call with this input acts on the instance (its scope is instance, or a host scope's field names no server). */
export function actsOnInstance(scope: Scope, input: unknown): boolean {
  if (scope === 'instance') return true;
  if (typeof scope !== 'object') return false;
  const value = (input as Record<string, unknown> | null | undefined)?.[scope.host];
  // "none": the peer's word for this machine in some inputs (a server's id is never that).
  return value === undefined || value === null || value === '' || value === 'none';
}

/** Procedures whose schemas depend on what other plugins register (e.g. the workload kinds): made once every plugin is set up. */
export type ProcedureFactory = () => Procedure<any, any>[];

/** Every procedure of the running kernel, by path. */
export class ProcedureRegistry {
  readonly #byPath = new Map<string, Procedure>();
  readonly #deferred: ProcedureFactory[] = [];
  add(...procedures: (Procedure<any, any> | ProcedureFactory)[]): void {
    for (const p of procedures) {
      if (typeof p === 'function') {
        this.#deferred.push(p);
        continue;
      }
      if (!/^[a-zA-Z][a-zA-Z0-9]*\.[a-zA-Z][a-zA-Z0-9]*$/.test(p.path)) throw new Error(`Procedure name "${p.path}" is not <router>.<procedure>`);
      if (!isScope(p.scope)) throw new Error(`Procedure "${p.path}" declares no scope (organization, instance, public or { host: field }): router(name, scope) or its own scope`);
      if (p.scope !== 'public' && !isNeed(p.permission) && !process.env.BERTH_PERM_LIST)
        throw new Error(`Procedure "${p.path}" declares no permission: \`permission: '<resource>.<action>'\` (core/src/permissions.ts) or 'member', not ${JSON.stringify(p.permission)}`);
      if (typeof p.scope === 'object' && !(p.input as { properties?: Record<string, unknown> }).properties?.[p.scope.host])
        throw new Error(`Procedure "${p.path}" acts on the host its input field ${p.scope.host} names, and its input has no such field`);
      if (p.multipart && p.kind !== 'mutation') throw new Error(`Procedure "${p.path}" takes an upload (multipart) and is no mutation`);
      if (this.#byPath.has(p.path)) throw new Error(`Procedure "${p.path}" is registered twice`);
      this.#byPath.set(p.path, p as Procedure);
    }
  }
  /** Makes the deferred procedures (the kernel calls it once every plugin is set up). */
  resolve(): void {
    for (const make of this.#deferred.splice(0)) this.add(...make());
  }
  get(path: string): Procedure | undefined {
    return this.#byPath.get(path);
  }
  all(): Procedure[] {
    return [...this.#byPath.values()];
  }
}

/** Where a request came from, as the transport saw it. */
export interface RequestOrigin {
  /** The socket's peer address. */
  address: string | undefined;
  /** True when the request carries a proxy's forwarding header (Forwarded, X-Forwarded-*, X-Real-IP). */
  forwarded: boolean;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
/** A caller on this machine's loopback, not relayed by a proxy. */
export const isLocalCaller = (origin: RequestOrigin) => !origin.forwarded && LOOPBACK.test(origin.address ?? '');

declare module './container.ts' {
  interface Cradle {
    /** The caller of the current request (request scope only). */
    principal: Principal | null;
    registry: ProcedureRegistry;
  }
}
