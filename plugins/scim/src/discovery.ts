// What /scim/v2 tells an identity provider about itself (RFC 7643 §5-7, RFC 7644 §4): the features
// it serves, its two resource types and their attributes. Static documents, with the base URL.
export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  config: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** The most resources one page holds (a larger count is cut to it). */
export const MAX_RESULTS = 200;
/** The largest request body taken, in bytes. */
export const MAX_PAYLOAD = 1024 * 1024;

export const serviceProviderConfig = (base: string) => ({
  schemas: [SCHEMA.config],
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: MAX_RESULTS },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: 'The token scim.generateToken answered, as Authorization: Bearer <token>', primary: true }],
  meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
});

const attribute = (name: string, o: { type?: string; required?: boolean; mutability?: string; caseExact?: boolean; multiValued?: boolean; uniqueness?: string; subAttributes?: unknown[] } = {}) => ({
  name,
  type: o.type ?? 'string',
  multiValued: o.multiValued ?? false,
  required: o.required ?? false,
  caseExact: o.caseExact ?? false,
  mutability: o.mutability ?? 'readWrite',
  returned: 'default',
  uniqueness: o.uniqueness ?? 'none',
  ...(o.subAttributes ? { subAttributes: o.subAttributes } : {}),
});

const schemas = (base: string) => [
  {
    schemas: [SCHEMA.schema],
    id: SCHEMA.user,
    name: 'User',
    description: "A member of the token's organization: userName is the account's e-mail address",
    attributes: [
      attribute('userName', { required: true, uniqueness: 'server' }),
      attribute('name', { type: 'complex', subAttributes: [attribute('givenName'), attribute('familyName'), attribute('formatted', { mutability: 'readOnly' })] }),
      attribute('displayName', { mutability: 'readOnly' }),
      attribute('emails', { type: 'complex', multiValued: true, mutability: 'readOnly', subAttributes: [attribute('value'), attribute('primary', { type: 'boolean' })] }),
      attribute('active', { type: 'boolean' }),
      attribute('externalId', { caseExact: true }),
      attribute('groups', {
        type: 'complex',
        multiValued: true,
        mutability: 'readOnly',
        subAttributes: [attribute('value', { mutability: 'readOnly' }), attribute('display', { mutability: 'readOnly' })],
      }),
    ],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMA.user}` },
  },
  {
    schemas: [SCHEMA.schema],
    id: SCHEMA.group,
    name: 'Group',
    description: "A role of the token's organization (admin, member, or a custom role): its members are the members holding it",
    attributes: [
      attribute('displayName', { required: true, mutability: 'immutable', uniqueness: 'server' }),
      attribute('members', { type: 'complex', multiValued: true, subAttributes: [attribute('value', { mutability: 'immutable' }), attribute('display', { mutability: 'readOnly' })] }),
    ],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMA.group}` },
  },
];

const resourceTypes = (base: string) => [
  { schemas: [SCHEMA.resourceType], id: 'User', name: 'User', endpoint: '/Users', schema: SCHEMA.user, meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` } },
  { schemas: [SCHEMA.resourceType], id: 'Group', name: 'Group', endpoint: '/Groups', schema: SCHEMA.group, meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` } },
];

/** A ListResponse of every item (discovery lists are never paged). */
const listOf = (items: unknown[]) => ({ schemas: [SCHEMA.list], totalResults: items.length, startIndex: 1, itemsPerPage: items.length, Resources: items });

export const discovery = {
  schemas: (base: string) => listOf(schemas(base)),
  schema: (base: string, id: string) => schemas(base).find(s => s.id === id) ?? null,
  resourceTypes: (base: string) => listOf(resourceTypes(base)),
  resourceType: (base: string, id: string) => resourceTypes(base).find(r => r.id === id) ?? null,
};
