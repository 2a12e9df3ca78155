// forwardAuth.* — the peer's ten procedures. An auth domain per proxy (serverId null: this
// machine's, the instance operators'; a server: its organization's), Berth as the provider that
// answers its checks (deployOnServer), and forward auth switched on and off per application domain.
import { Type, router } from '@berth/core';
import { AuthDomain, CallbackUrl, DeployInput, DomainStatus, DomainTarget, EnableInput, Ok, Provider, ServerStatus, ServerTarget, SetAuthDomainInput } from './schemas.ts';

const onProxy = router('forwardAuth', { host: 'serverId' });
const forwardAuth = router('forwardAuth', 'organization');

export const forwardAuthProcedures = [
  onProxy.query('getAuthDomain', {
    permission: 'server.read',
    summary: "The auth domain of this machine's proxy (serverId null) or of a server of the organization; null while none is set",
    input: ServerTarget,
    output: AuthDomain,
    handler: ({ serverId }, ctx) => ctx.cradle.forwardAuthRequests.getAuthDomain(serverId),
  }),
  onProxy.mutation('setAuthDomain', {
    access: 'admin',
    permission: 'server.create',
    summary:
      "Sets the host of the sign-in page on a proxy: the proxy routes its /api/forward-auth/ to Berth at once; the session cookie is scoped to the host's parent, so the guarded domains must be below it",
    input: SetAuthDomainInput,
    output: CallbackUrl,
    handler: (input, ctx) => ctx.cradle.forwardAuthRequests.setAuthDomain(input),
  }),
  onProxy.mutation('removeAuthDomain', {
    access: 'admin',
    permission: 'server.delete',
    summary: "Removes a proxy's auth domain and its route; its guarded domains are no longer served until one is set again",
    input: ServerTarget,
    output: Ok,
    handler: ({ serverId }, ctx) => ctx.cradle.forwardAuthRequests.removeAuthDomain(serverId),
  }),
  forwardAuth.query('listProviders', {
    permission: 'member',
    summary: 'Who can answer the checks: Berth itself (providerId berth), with no extra service',
    input: Type.Object({}),
    output: Type.Array(Provider),
    handler: (_input, ctx) => ctx.cradle.forwardAuthRequests.listProviders(),
  }),
  forwardAuth.query('serverStatus', {
    permission: 'server.read',
    summary: "Each proxy the caller may guard domains on (this machine's for the instance operators, the organization's deploy servers) with its auth domain and whether Berth answers its checks",
    input: Type.Object({}),
    output: Type.Array(ServerStatus),
    handler: (_input, ctx) => ctx.cradle.forwardAuthRequests.serverStatus(),
  }),
  onProxy.mutation('deployOnServer', {
    access: 'admin',
    permission: 'server.create',
    summary: 'Has Berth answer the checks of this proxy (providerId berth; the auth domain first): domains can then be guarded',
    input: DeployInput,
    output: Ok,
    handler: (input, ctx) => ctx.cradle.forwardAuthRequests.deployOnServer(input),
  }),
  onProxy.mutation('removeOnServer', {
    access: 'admin',
    permission: 'server.delete',
    summary: 'Stops answering the checks of this proxy: its guarded domains are no longer served (never served unchecked)',
    input: ServerTarget,
    output: Ok,
    handler: ({ serverId }, ctx) => ctx.cradle.forwardAuthRequests.removeOnServer(serverId),
  }),
  forwardAuth.query('status', {
    permission: 'domain.read',
    summary: "Whether a domain of the organization asks for a signed-in member, and the least role it asks (Berth's own field)",
    input: DomainTarget,
    output: DomainStatus,
    handler: ({ domainId }, ctx) => ctx.cradle.forwardAuthRequests.status(domainId),
  }),
  forwardAuth.mutation('enable', {
    permission: 'domain.create',
    summary:
      "Serves an application's domain only to signed-in members of its organization (role: the least role, default member): anonymous browsers are sent to the sign-in page (302), other clients get 401, at once",
    input: EnableInput,
    output: Ok,
    handler: (input, ctx) => ctx.cradle.forwardAuthRequests.enable(input),
  }),
  forwardAuth.mutation('disable', {
    permission: 'domain.create',
    summary: 'Serves the domain to anyone again, at once',
    input: DomainTarget,
    output: Ok,
    handler: ({ domainId }, ctx) => ctx.cradle.forwardAuthRequests.disable(domainId),
  }),
];
