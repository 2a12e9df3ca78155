// A procedure is what a plugin declares: a name, a kind, TypeBox input and output schemas
// and a handler. The kernel mounts it on every transport; handlers never see Fastify.
import type { Static, TSchema } from 'typebox';
import type { AwilixContainer } from 'awilix';
import type { Cradle } from './container.ts';

/** Who may call: anyone, any signed-in member of the organization, or its admins/owner. */
export type Access = 'public' | 'member' | 'admin';
export type Role = 'owner' | 'admin' | 'member';

export interface Principal {
  userId: string;
  /** The organization every read and write of this request is confined to. */
  organizationId: string;
  role: Role;
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
  readonly access: Access;
  readonly summary?: string;
  readonly description?: string;
  /** Response headers the procedure may set, by lower-case name, with what they carry (documented in OpenAPI). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly handler: (input: Static<I>, ctx: ProcedureContext) => Promise<Static<O>> | Static<O>;
}

type ProcedureSpec<I extends TSchema, O extends TSchema> = {
  input: I;
  output: O;
  access?: Access;
  summary?: string;
  description?: string;
  headers?: Record<string, string>;
  handler: (input: Static<I>, ctx: ProcedureContext) => Promise<Static<O>> | Static<O>;
};

/** Builds the procedures of one router with their input types inferred. */
export function router(routerName: string) {
  const make =
    (kind: 'query' | 'mutation') =>
    <I extends TSchema, O extends TSchema>(name: string, spec: ProcedureSpec<I, O>): Procedure<I, O> =>
      ({ path: `${routerName}.${name}`, router: routerName, name, kind, access: spec.access ?? 'member', ...spec }) as Procedure<I, O>;
  return { query: make('query'), mutation: make('mutation') };
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
