// domain.*, redirects.*, security.*, certificates.* — records of the caller's organization.
import { Type, router, schema, type ProcedureContext, type TSchema } from '@berth/core';
import type { DomainService } from './domain-service.ts';
import type { DomainPreflight } from './preflight.ts';
import type { ProxyRouting } from './routing.ts';
import {
  CertificateIdInput,
  CertificateView,
  CertificateWithServer,
  CreateCertificateInput,
  CreateDomainInput,
  CreateRedirectInput,
  CreateSecurityInput,
  DomainIdInput,
  DomainView,
  DomainWithApplication,
  DomainWithCompose,
  DomainWithPreflight,
  GenerateDomainInput,
  RedirectIdInput,
  RedirectView,
  SecurityIdInput,
  SecurityView,
  UpdateCertificateInput,
  UpdateDomainInput,
  UpdateRedirectInput,
  UpdateSecurityInput,
  ValidateDomainInput,
  ValidateDomainView,
} from './schemas.ts';
import { asciiHost } from './routing.ts';

const { Ok } = schema;
const domain = router('domain', 'organization');
const redirects = router('redirects', 'organization');
const security = router('security', 'organization');
const certificates = router('certificates', 'organization');

export const domainProcedures = (deps: { domains: DomainService; preflight: DomainPreflight; routing: ProxyRouting }) => [
  domain.mutation('create', {
    permission: 'domain.create',
    summary: 'Add a domain to a workload (applicationId, or composeId); the proxy serves it at once, no redeploy needed',
    description: 'CONFLICT when another domain already routes the same host and path.',
    input: CreateDomainInput,
    output: DomainView,
    handler: (input, ctx) => ctx.cradle.domainRequests.create(input),
  }),
  domain.query('one', {
    permission: 'domain.read',
    summary: "A domain of the organization with its application (applicationId, appName, name), and a preflight: DNS, the proxy's port, the workload, the certificate",
    input: DomainIdInput,
    output: DomainWithPreflight,
    handler: async ({ domainId }, ctx) => {
      const row = await ctx.cradle.domainRequests.one(domainId);
      const workload = (await ctx.cradle.workloads.kind(row.serviceType)?.find(row.serviceId, ctx.cradle.em)) ?? null;
      const preflight = await deps.preflight.run({ host: asciiHost(row.host) || row.host, https: row.https, workload }, deps.routing.servedBy(workload?.serverId ?? null));
      return { ...deps.domains.withApplication(row, workload), preflight };
    },
  }),
  domain.query('byApplicationId', {
    permission: 'domain.read',
    summary: 'The domains of an application, oldest first, each with the application (applicationId, appName, name)',
    input: Type.Object({ applicationId: Type.String({ minLength: 1, maxLength: 255 }) }),
    output: Type.Array(DomainWithApplication),
    handler: ({ applicationId }, ctx) => ctx.cradle.domainRequests.byApplication(applicationId),
  }),
  domain.query('byComposeId', {
    permission: 'domain.read',
    summary: 'The domains of a compose stack, oldest first, each with the stack (composeId, appName, name)',
    input: Type.Object({ composeId: Type.String({ minLength: 1, maxLength: 255 }) }),
    output: Type.Array(DomainWithCompose),
    handler: ({ composeId }, ctx) => ctx.cradle.domainRequests.byCompose(composeId),
  }),
  domain.mutation('update', {
    permission: 'domain.create',
    summary: 'Change a domain; the proxy serves the change at once',
    input: UpdateDomainInput,
    output: DomainView,
    handler: (input, ctx) => ctx.cradle.domainRequests.update(input),
  }),
  domain.mutation('delete', {
    permission: 'domain.delete',
    summary: 'Remove a domain; the proxy stops routing it at once. Answers it as it was',
    input: DomainIdInput,
    output: DomainView,
    handler: ({ domainId }, ctx) => ctx.cradle.domainRequests.remove(domainId),
  }),
  domain.mutation('generateDomain', {
    permission: 'domain.create',
    summary: "A wildcard-DNS host name for the server's address (<appName>-<random>-<ip>.<generatedDomainBase>), not stored",
    input: GenerateDomainInput,
    output: Type.String(),
    handler: async ({ appName }) => deps.domains.generate(appName),
  }),
  domain.query('canGenerateTraefikMeDomains', {
    permission: 'domain.read',
    summary: 'The server\'s address generated hosts point at (BERTH_SERVER_IP); "" while none is configured, when generateDomain cannot make hosts',
    input: Type.Object({ serverId: Type.Optional(Type.String({ maxLength: 255 })) }),
    output: Type.String(),
    handler: async () => deps.domains.generationAddress(),
  }),
  domain.mutation('validateDomain', {
    permission: 'domain.read',
    summary: 'Does the host resolve to this server (or to serverIp), with the preflight of the proxy and the certificate',
    input: ValidateDomainInput,
    output: ValidateDomainView,
    handler: async ({ domain: host, serverIp }) => {
      const ascii = asciiHost(host);
      const provider = deps.routing.provider();
      const expected = serverIp ?? undefined;
      const addresses = ascii ? await deps.preflight.resolve(ascii).catch(() => [] as string[]) : [];
      const preflight = await deps.preflight.run({ host: ascii || host, https: false, workload: null }, provider);
      const dns = expected ? await deps.preflight.dns(ascii || host, expected) : preflight.checks.find(c => c.check === 'dns')!;
      const isValid = dns.ok === true || (dns.ok === null && addresses.length > 0);
      return { isValid, ...(addresses[0] ? { resolvedIp: addresses.join(', ') } : {}), ...(isValid ? {} : { error: dns.reason }), isCloudflare: false, preflight };
    },
  }),

  ...ruleProcedures(redirects, 'redirectId', { Create: CreateRedirectInput, Update: UpdateRedirectInput, Id: RedirectIdInput, View: RedirectView }, ctx => ctx.cradle.redirectRequests, {
    create: 'Add a redirect to an application (regex over the full URL → replacement; 301 when permanent, else 302)',
    one: 'A redirect of the organization',
    update: 'Change a redirect',
    remove: 'Remove a redirect',
  }),
  ...ruleProcedures(security, 'securityId', { Create: CreateSecurityInput, Update: UpdateSecurityInput, Id: SecurityIdInput, View: SecurityView }, ctx => ctx.cradle.securityRequests, {
    create: 'Add a basic-auth user to an application (every domain of it asks for a user then)',
    one: 'A basic-auth user of the organization',
    update: "Change a user's name and password",
    remove: 'Remove a basic-auth user',
  }),

  certificates.mutation('create', {
    permission: 'certificate.create',
    summary: 'Upload a certificate (PEM chain, leaf first) and its private key; stored sealed and written where the proxy reads it',
    input: CreateCertificateInput,
    output: CertificateView,
    handler: (input, ctx) => ctx.cradle.certificateRequests.create(input),
  }),
  certificates.query('all', {
    permission: 'certificate.read',
    summary: "The organization's certificates (without private keys), each with its server (null)",
    input: Type.Object({}),
    output: Type.Array(CertificateWithServer),
    handler: async (_i, ctx) => (await ctx.cradle.certificateRequests.all()).map(c => ({ ...c, server: null })),
  }),
  certificates.query('one', {
    permission: 'certificate.read',
    summary: 'A certificate (without its private key)',
    input: CertificateIdInput,
    output: CertificateView,
    handler: ({ certificateId }, ctx) => ctx.cradle.certificateRequests.one(certificateId),
  }),
  certificates.mutation('update', {
    permission: 'certificate.update',
    summary: "Replace a certificate's name, chain or key",
    input: UpdateCertificateInput,
    output: CertificateView,
    handler: (input, ctx) => ctx.cradle.certificateRequests.update(input),
  }),
  certificates.mutation('remove', {
    permission: 'certificate.delete',
    summary: 'Delete a certificate and its files; answers true, as the peer does',
    input: CertificateIdInput,
    output: Ok(),
    async handler({ certificateId }, ctx) {
      await ctx.cradle.certificateRequests.remove(certificateId);
      return true;
    },
  }),
];

/** A request's records of one kind of proxy rule of an application (redirects, basic-auth users). */
interface RuleRecords {
  create(input: never): Promise<unknown>;
  one(id: string): Promise<unknown>;
  update(input: never): Promise<unknown>;
  remove(id: string): Promise<unknown>;
}

/** create, one, update and delete of one kind of proxy rule; create answers true as the peer's does (the new record is listed in its application's `one`). */
function ruleProcedures(
  r: ReturnType<typeof router>,
  idKey: string,
  s: { Create: TSchema; Update: TSchema; Id: TSchema; View: TSchema },
  records: (ctx: ProcedureContext) => RuleRecords,
  say: { create: string; one: string; update: string; remove: string },
) {
  const idOf = (input: unknown) => (input as Record<string, string>)[idKey]!;
  return [
    r.mutation('create', {
      permission: 'service.create',
      summary: `${say.create}; answers true (the new record is listed in its application's one)`,
      input: s.Create,
      output: Ok(),
      async handler(input, ctx) {
        await records(ctx).create(input as never); // cast: the input schema is built per owner kind at run time
        return true;
      },
    }),
    r.query('one', { permission: 'service.read', summary: say.one, input: s.Id, output: s.View, handler: (input, ctx) => records(ctx).one(idOf(input)) }),
    r.mutation('update', { permission: 'service.create', summary: say.update, input: s.Update, output: s.View, handler: (input, ctx) => records(ctx).update(input as never) }), // cast: as in create
    r.mutation('delete', { permission: 'service.delete', summary: `${say.remove}; answers it as it was`, input: s.Id, output: s.View, handler: (input, ctx) => records(ctx).remove(idOf(input)) }),
  ];
}
