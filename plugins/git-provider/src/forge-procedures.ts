// The procedures of a forge that brings no record of its own, made from its GitConnectionForm:
// `<forge>.create`, `.one`, `.<forge>Providers`, `.get<Forge>Repositories`, `.get<Forge>Branches`,
// `.testConnection`, `.update` — the four built-in forges' routers (procedures.ts) in the same
// shape, their fields the form's. A connection is removed and shared through gitProvider.*.
import { Type, router, schema, type GitProvider, type TSchema } from '@berth/core';
import { ForgeConnections } from './connections/forge.ts';
import { GitProviderView } from './schemas.ts';

const { Nullable, NonEmpty } = schema;
const Id = NonEmpty({ maxLength: 255 });
const Name = NonEmpty({ maxLength: 255 });

/** Each property of an object schema made optional (a stored connection answers the settings it has). */
const optional = (properties: Record<string, TSchema>) => Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)]));

const Repository = Type.Object({ id: Type.String(), name: Type.String(), owner: Type.String(), cloneUrl: Type.String(), defaultBranch: Nullable(Type.String()), private: Type.Boolean() });
const Branch = Type.Object({ name: Type.String(), commit: Type.String() });

/** The router of one forge declaring `connection`. */
export function forgeProcedures(provider: GitProvider) {
  const form = provider.connection!;
  const type = provider.id;
  const idField = ForgeConnections.idField(provider);
  const Type_ = `${type[0]!.toUpperCase()}${type.slice(1)}`;
  const r = router(type, 'organization');
  const IdInput = Type.Object({ [idField]: Id });
  const View = Type.Object({ [idField]: Type.String(), gitProviderId: Type.String(), ...optional(form.settings.properties), gitProvider: GitProviderView });
  const idOf = (input: Record<string, unknown>) => input[idField] as string;
  return [
    r.mutation('create', {
      access: 'admin',
      summary: `Connect a ${provider.label} account (its settings, and its secrets sealed), checked against the service first; the owner is the caller`,
      input: Type.Object({ name: Name, ...form.settings.properties, ...form.secrets.properties }),
      output: View,
      handler: (input, ctx) => ctx.cradle.forgeConnections.create(type, input),
    }),
    r.query('one', {
      summary: `A ${provider.label} connection with its git provider and settings (secrets never answered)`,
      input: IdInput,
      output: View,
      handler: (input, ctx) => ctx.cradle.forgeConnections.one(type, idOf(input)),
    }),
    r.query(`${type}Providers`, {
      summary: `The organization's ${provider.label} connections the caller may use, newest first`,
      input: Type.Object({}),
      output: Type.Array(View),
      handler: (_input, ctx) => ctx.cradle.forgeConnections.all(type),
    }),
    r.query(`get${Type_}Repositories`, {
      summary: 'Every repository the connection reaches (all pages)',
      input: IdInput,
      output: Type.Array(Repository),
      handler: (input, ctx) => ctx.cradle.forgeConnections.repositories(type, idOf(input)),
    }),
    r.query(`get${Type_}Branches`, {
      summary: 'Every branch of owner/repo (all pages)',
      input: Type.Object({ [idField]: Id, owner: Id, repo: Id }),
      output: Type.Array(Branch),
      handler: (input, ctx) => ctx.cradle.forgeConnections.branches(type, idOf(input), { owner: input.owner as string, name: input.repo as string }),
    }),
    r.mutation('testConnection', {
      summary: "Runs a deploy's path: lists the repositories (API), then git ls-remote on the first with a fresh clone credential; a failure says which step",
      input: IdInput,
      output: Type.String(),
      handler: (input, ctx) => ctx.cradle.forgeConnections.testConnection(type, idOf(input)),
    }),
    r.mutation('update', {
      access: 'admin',
      summary: 'Rename the connection and change the fields given (secrets sealed), checked against the service again',
      input: Type.Object({ [idField]: Id, name: Type.Optional(Name), ...optional(form.settings.properties), ...optional(form.secrets.properties) }),
      output: View,
      handler: (input, ctx) => ctx.cradle.forgeConnections.update(type, idOf(input), input),
    }),
  ];
}
