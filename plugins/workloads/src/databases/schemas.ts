// The API of one database kind, built from its driver: the record's fields, create (both
// variants at once: environmentId or projectId), update, and the small inputs. The kinds
// differ only in the credential fields and password rules their driver declares.
import Type, { type Static, type TEnum, type TInteger, type TNull, type TObject, type TOptional, type TProperties, type TSchema, type TString, type TUnion } from 'typebox';
import { swarmResourceAnswers, swarmSettingFields } from '../swarm/settings.ts';
import type { relationSchemas } from '../relations.ts';
import { logQuery } from '../inputs.ts';
import { schemasOf } from '../field-table.ts';
import { type DatabaseDriver, schema } from '@berth/core';
const { AppName, NonEmpty, Nullable, Paging, Status, Timestamp } = schema;

const Opt = <T extends TSchema>(t: T) => Type.Optional(t);
const Str = () => Nullable(Type.String());
const partial = (o: Record<string, TSchema>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Type.Optional(v)]));

/** Settings kept in the record's JSON column, with defaults. */
export const databaseSettingFields = {
  ...swarmSettingFields,
  dockerImage: [Type.String({ minLength: 1 }), ''],
  // the peer's name (its platform network is the one Berth calls berth-network)
  detachDokployNetwork: [Type.Boolean(), false],
} satisfies Record<string, [TSchema, unknown]>;

/** A port published on the host, or null for none. */
const HostPort = () => Nullable(Type.Integer({ minimum: 1, maximum: 65535 }));

/** The settings of one kind's records: the shared ones, the driver's own record fields and the external port fields of its extra ports. */
export const settingFieldsOf = (driver: DatabaseDriver): Record<string, [TSchema, unknown]> => ({
  ...databaseSettingFields,
  ...Object.fromEntries(Object.entries(driver.recordFields ?? {}).map(([k, f]) => [k, [f.schema, f.default]])),
  ...Object.fromEntries(Object.keys(driver.extraPorts ?? {}).map(k => [k, [HostPort(), null]])),
});

/** Every external port field of the kind's records: externalPort, then its extra ports' fields. */
export const externalPortFields = (driver: DatabaseDriver): string[] => ['externalPort', ...Object.keys(driver.extraPorts ?? {})];

/** A kind's id key (postgresId, redisId…): its name differs per kind, so handlers read it through `idKey`. */
export type IdKey = `${string}Id`;
/** An input that names one database by its kind's id key, with the given other fields. */
export type WithId<P extends TProperties = {}> = TObject<Record<IdKey, TString> & P>;

export interface DatabaseSchemas {
  idKey: IdKey;
  /** The record as stored (every API field). */
  Fields: TObject;
  Create: TObject;
  /** Any updatable field; handlers read only the id key and pass the rest on. */
  Update: WithId;
  Id: WithId;
  Reload: WithId<{ appName: TString }>;
  ExternalPort: WithId<{ externalPort: TUnion<[TInteger, TNull]> }>;
  /** Every external port at once (kinds with extra ports: saveExternalPorts). */
  ExternalPorts: TObject;
  Environment: WithId<{ env: TUnion<[TString, TNull]> }>;
  Status: WithId<{ applicationStatus: TEnum<['idle', 'running', 'done', 'error']> }>;
  Move: WithId<{ targetEnvironmentId: TString }>;
  ChangePassword: WithId<{ password: TString; type: TOptional<TEnum<['user', 'root']>> }>;
  Search: TObject;
  SearchResult: TObject;
  ReadLogs: WithId<{ tail: TOptional<TInteger>; since: TOptional<TString>; search: TOptional<TString> }>;
}

export function databaseSchemas(driver: DatabaseDriver): DatabaseSchemas {
  const idKey: IdKey = `${driver.kind}Id`;
  const settingSchemas = schemasOf(settingFieldsOf(driver));
  const settingAnswers = { ...settingSchemas, ...swarmResourceAnswers };
  const Id = { [idKey]: NonEmpty() } as Record<IdKey, TString>;
  const password = driver.passwordSchema;
  const olderPassword = driver.olderPasswordSchema ?? Type.String();
  const credentialFields: Record<string, TSchema> = {};
  if (driver.fields.databaseName) credentialFields.databaseName = Type.String();
  if (driver.fields.databaseUser) credentialFields.databaseUser = Type.String();
  credentialFields.databasePassword = Type.String();
  // Never null in an answer, as the peer's (a root password is generated when none is given).
  if (driver.fields.databaseRootPassword) credentialFields.databaseRootPassword = Type.String();

  const Fields = Type.Object({
    [idKey]: Type.String(),
    name: Type.String(),
    appName: Type.String(),
    description: Str(),
    ...credentialFields,
    env: Str(),
    externalPort: Nullable(Type.Integer()),
    applicationStatus: Status(),
    ...settingAnswers,
    environmentId: Type.String(),
    serverId: Str(),
    organizationId: Type.String(),
    createdAt: Timestamp(),
  });

  const create: Record<string, TSchema> = {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    appName: Opt(AppName()),
    description: Opt(Str()),
    dockerImage: Opt(Type.String({ minLength: 1, description: `default: ${driver.defaultImage.current} (current variant), ${driver.defaultImage.older} (older)` })),
    environmentId: Opt(NonEmpty({ description: 'current variant: the environment that holds the database' })),
    projectId: Opt(NonEmpty({ description: 'older variant: the project, whose default environment holds the database' })),
    serverId: Opt(Str()),
    // The current variant's rules apply to a request with environmentId, the older one's to a request with
    // projectId; the service checks which (see DatabaseService.create).
    databasePassword: Type.String({
      description: `current variant (environmentId): ${(password as { description?: string }).description ?? 'see the driver'}; older variant (projectId): ${(olderPassword as { description?: string }).description ?? 'any string'}`,
    }),
  };
  if (driver.fields.databaseName) create.databaseName = NonEmpty();
  if (driver.fields.databaseUser) create.databaseUser = driver.defaultUser ? Opt(NonEmpty()) : NonEmpty();
  if (driver.fields.databaseRootPassword) create.databaseRootPassword = Opt(Nullable(Type.String({ description: 'the same rules as databasePassword; generated when empty or absent' })));
  for (const [k, f] of Object.entries(driver.recordFields ?? {})) if (f.create) create[k] = Opt(f.schema);

  const updatable: Record<string, TSchema> = {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    appName: AppName(),
    description: Str(),
    env: Str(),
    externalPort: HostPort(),
    applicationStatus: Status(),
    environmentId: NonEmpty(),
    createdAt: Type.String(),
    ...settingSchemas,
    dockerImage: Type.String({ minLength: 1 }),
  };
  if (driver.fields.databaseName) updatable.databaseName = NonEmpty();
  if (driver.fields.databaseUser) updatable.databaseUser = NonEmpty();
  // update and changePassword cannot tell the variants apart: the current variant's rules apply.
  updatable.databasePassword = password;
  if (driver.fields.databaseRootPassword) updatable.databaseRootPassword = Nullable(password);

  return {
    idKey,
    Fields,
    Create: Type.Object(create),
    Update: Type.Object({ ...Id, ...partial(updatable) }),
    Id: Type.Object(Id),
    Reload: Type.Object({ ...Id, appName: AppName() }),
    ExternalPort: Type.Object({ ...Id, externalPort: HostPort() }),
    // Its port fields are the driver's: handlers read them from the input as a record.
    ExternalPorts: Type.Object({ ...Id, ...Object.fromEntries(externalPortFields(driver).map(k => [k, Opt(HostPort())])) }),
    Environment: Type.Object({ ...Id, env: Str() }),
    Status: Type.Object({ ...Id, applicationStatus: Status() }),
    Move: Type.Object({ ...Id, targetEnvironmentId: NonEmpty() }),
    ChangePassword: Type.Object({
      ...Id,
      password: Type.String({ ...(password as object), minLength: 1 }),
      type: Opt(Type.Enum(['user', 'root'], { description: 'which password (root: mysql/mariadb only); default user' })),
    }),
    Search: Type.Object({
      q: Opt(Type.String()),
      name: Opt(Type.String()),
      appName: Opt(Type.String()),
      description: Opt(Type.String()),
      projectId: Opt(Type.String()),
      environmentId: Opt(Type.String()),
      ...Paging,
    }),
    SearchResult: Type.Object({ items: Type.Array(Fields), total: Type.Integer({ minimum: 0 }) }),
    ReadLogs: Type.Object({ ...Id, ...logQuery() }),
  };
}

/**
 * The record with where it lives and what hangs off it, as the peer answers `one`, start, stop,
 * saveExternalPort, changeStatus and remove — plus the connection URLs. Backups and remote
 * servers come with their plugins: until then empty and null.
 */
export const databaseView = (Fields: TObject, relations: ReturnType<typeof relationSchemas>) =>
  Type.Object({
    ...Fields.properties,
    environment: relations.environment,
    mounts: relations.mounts,
    server: relations.server,
    backups: relations.backups,
    internalConnectionUrl: Type.String({ description: 'from other workloads on the platform network' }),
    externalConnectionUrl: Nullable(Type.String({ description: 'from outside, through the external port (null without one)' })),
  });

export type AnyRecord = Static<TObject> & Record<string, unknown>;
