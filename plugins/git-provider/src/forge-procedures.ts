// The procedures of a forge that keeps its connections in the generic record, made from its
// GitConnectionForm: `<forge>.create`, `.one`, `.<forge>Providers`, `.get<Forge>Repositories`,
// `.get<Forge>Branches`, `.testConnection`, `.update`, their fields the form's. Where the forge keeps
// another platform's wire (`form.wire`: the peer's inputs and answers), each operation it names takes
// that input and answers that shape; the rest are generated. A connection is removed and shared
// through gitProvider.*.
import { Type, badRequest, notFound, router, schema, type GitProvider, type TSchema } from '@berth/core';
import { connectionRecordSchema, forgeIdField } from './records.ts';
import { GitProviderView } from './schemas.ts';
import { appSetupPath, callbackPath } from './setup.ts';

const { Nullable, NonEmpty } = schema;
const Id = NonEmpty({ maxLength: 255 });
const Name = NonEmpty({ maxLength: 255 });

/** Each property of an object schema made optional (an update takes the fields it changes). */
const optional = (properties: Record<string, TSchema>) => Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)]));
const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map(k => [k, o[k]]));

const Repository = Type.Object({ id: Type.String(), name: Type.String(), owner: Type.String(), cloneUrl: Type.String(), defaultBranch: Nullable(Type.String()), private: Type.Boolean() });
const Branch = Type.Object({ name: Type.String(), commit: Type.String() });

/** The router of one forge declaring `connection`. */
export function forgeProcedures(provider: GitProvider) {
  const form = provider.connection!;
  const wire = form.wire ?? {};
  const type = provider.id;
  const idField = forgeIdField(provider);
  const Type_ = `${type[0]!.toUpperCase()}${type.slice(1)}`;
  const r = router(type, 'organization');
  const IdInput = Type.Object({ [idField]: Id });
  const Record_ = connectionRecordSchema(provider);
  const View = Type.Object({ ...Record_.properties, gitProvider: GitProviderView });
  const idOf = (input: Record<string, unknown>) => input[idField] as string;
  const { providers, repositories, branches, testConnection, update } = wire;
  const createFields = wire.create?.fields;
  const updateAnswer = { record: Record_, ok: Type.Boolean(), success: Type.Object({ success: Type.Boolean() }) } as const;
  const create =
    wire.create === null
      ? []
      : [
          r.mutation('create', {
            permission: 'gitProviders.create',
            summary:
              wire.create?.summary ??
              `Connect a ${provider.label} account (its settings, and its secrets sealed)${wire.create?.checked === false ? '' : ', checked against the service first'}; the owner is the caller`,
            input: wire.create?.input ?? Type.Object({ name: Name, ...form.settings.properties, ...form.secrets.properties }),
            output: createFields ? Type.Object(Object.fromEntries(createFields.map(k => [k, Type.String()]))) : View,
            handler: async (input, ctx) => {
              const made = await ctx.cradle.forgeConnections.create(type, input);
              return createFields ? Object.fromEntries(createFields.map(k => [k, made[k] === null || made[k] === undefined ? '' : String(made[k])])) : made;
            },
          }),
        ];
  const setup = form.appSetup;
  return [
    ...create,
    r.query('one', {
      permission: 'member',
      summary: `A ${provider.label} connection with its git provider and settings (secrets never answered)`,
      input: IdInput,
      output: View,
      handler: (input, ctx) => ctx.cradle.forgeConnections.one(type, idOf(input)),
    }),
    r.query(`${type}Providers`, {
      permission: 'member',
      summary: providers?.summary ?? `The organization's ${provider.label} connections the caller may use, newest first`,
      input: Type.Object({}),
      output: Type.Array(providers ? Type.Pick(View, [...providers.fields, 'gitProvider']) : View),
      handler: async (_input, ctx) => (await ctx.cradle.forgeConnections.all(type, providers?.when)).map(c => (providers ? pick(c, [...providers.fields, 'gitProvider']) : c)),
    }),
    r.query(`get${Type_}Repositories`, {
      permission: 'member',
      summary: repositories?.summary ?? 'Every repository the connection reaches (all pages)',
      input: IdInput,
      output: Type.Array(repositories?.output ?? Repository),
      handler: async (input, ctx) => (await ctx.cradle.forgeConnections.repositories(type, idOf(input))).map(x => (repositories ? repositories.view(x) : x)),
    }),
    r.query(`get${Type_}Branches`, {
      permission: 'member',
      summary: branches?.summary ?? 'Every branch of owner/repo (all pages)',
      input: branches?.input ?? Type.Object({ [idField]: Id, owner: Id, repo: Id }),
      output: Type.Array(branches?.output ?? Branch),
      handler: async (input, ctx) => {
        if (!input[idField]) {
          if (branches?.idRequired) throw badRequest(`${idField}: the ${provider.label} provider is required`);
          return [];
        }
        const named = () => (branches ? branches.repository(input) : { owner: input.owner as string, name: input.repo as string });
        return (await ctx.cradle.forgeConnections.branches(type, idOf(input), named)).map(b => (branches ? branches.view(b) : b));
      },
    }),
    r.mutation('testConnection', {
      permission: 'member',
      summary: testConnection?.summary ?? "Runs a deploy's path: lists the repositories (API), then git ls-remote on the first with a fresh clone credential; a failure says which step",
      input: testConnection?.input ?? IdInput,
      output: Type.String(),
      handler: (input, ctx) => {
        // The older peer's field was optional: none names no connection.
        if (!input[idField]) throw notFound(`${provider.label} Provider`);
        const adjust = testConnection?.account;
        return ctx.cradle.forgeConnections.testConnection(type, idOf(input), adjust ? stored => adjust(input, stored) : undefined);
      },
    }),
    r.mutation('update', {
      permission: 'gitProviders.create',
      summary: update?.summary ?? `Rename the connection and change the fields given (secrets sealed)${update?.checked === false ? '' : ', checked against the service again'}`,
      input: update?.input ?? Type.Object({ [idField]: Id, name: Type.Optional(Name), ...optional(form.settings.properties), ...optional(form.secrets.properties) }),
      output: update?.answer ? updateAnswer[update.answer] : View,
      handler: async (input, ctx) => {
        const { gitProvider, ...record } = await ctx.cradle.forgeConnections.update(type, idOf(input), input);
        if (update?.answer === 'ok') return true;
        if (update?.answer === 'success') return { success: true };
        return update?.answer === 'record' ? record : { ...record, gitProvider };
      },
    }),
    ...Object.entries(wire.settingQueries ?? {}).map(([name, { setting, summary }]) =>
      r.query(name, {
        permission: 'member',
        summary,
        input: IdInput,
        output: (Record_.properties as Record<string, TSchema>)[setting] ?? Type.Unknown(),
        handler: (input, ctx) => ctx.cradle.forgeConnections.setting(type, idOf(input), setting),
      }),
    ),
    ...(setup
      ? [
          r.mutation('setupState', {
            permission: 'gitProviders.create',
            summary: `Berth's: the state to put in a ${provider.label} App manifest form; ${appSetupPath(type)} accepts it from this organization only, for one hour`,
            input: Type.Object({ [setup.url.setting]: Type.Optional(Type.String({ maxLength: 255, description: `${setup.url.default} (default) or another server's URL` })) }),
            output: Type.Object({
              state: Type.String({
                description: `${setup.statePrefix}_init:<signed>: pass it as the manifest form's state; ${appSetupPath(type)} accepts it from the caller's organization only, for one hour`,
              }),
              setupUrl: Type.String({ description: `Berth's route ${provider.label} sends the user back to (the manifest's redirect_url)` }),
            }),
            handler: (input, ctx) => ctx.cradle.gitProviderSetup.issue(ctx.principal, type, (input[setup.url.setting] as string | undefined) ?? setup.url.default),
          }),
          r.mutation('installState', {
            permission: 'gitProviders.create',
            summary: `Berth's: the state of the App's installation page for a connection the caller may use; ${appSetupPath(type)} accepts it from the caller only, for that connection, for one hour`,
            input: IdInput,
            output: Type.Object({
              state: Type.String({
                description: `${setup.statePrefix}_setup:<signed>: the state of the App's installation page; ${appSetupPath(type)} accepts it from the caller only, for this connection, for one hour`,
              }),
              installUrl: Type.String({ description: `the App's installation page on ${provider.label}, with the state` }),
            }),
            handler: (input, ctx) => ctx.cradle.gitProviderSetup.installation(ctx.principal, type, idOf(input), ctx.cradle.em),
          }),
        ]
      : []),
    ...(form.oauth?.start === 'procedure'
      ? [
          r.mutation('authorization', {
            permission: 'gitProviders.create',
            summary: `Berth's: ${provider.label}'s authorization page for the connection, with a state ${callbackPath(type)} accepts from this organization, for this connection, for one hour`,
            input: IdInput,
            output: Type.Object({
              state: Type.String({ description: `signed: ${callbackPath(type)} accepts it from this organization, for this record, for one hour` }),
              authorizeUrl: Type.String({ description: `${provider.label}'s authorization page to send the user to (client id, redirect URI and state filled in)` }),
            }),
            handler: (input, ctx) => ctx.cradle.gitProviderSetup.authorization(ctx.principal, type, idOf(input), ctx.cradle.em),
          }),
        ]
      : []),
  ];
}
