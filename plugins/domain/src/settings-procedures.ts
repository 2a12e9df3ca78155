// The settings.* proxy operations (the proxy serves the whole instance: its operators only,
// docs/security.md). The
// Traefik-named ones answer 400 naming the active provider unless it is traefik.
import { Type, router, type Need, type ProcedureContext, type Static, type TSchema } from '@berth/core';
import type { ServerAddress } from './server-address.ts';
import type { ProxySettings } from './settings-service.ts';

const settings = router('settings', 'instance');
const application = router('application', 'organization'); // kind-names: the peer's application.readTraefikConfig/updateTraefikConfig
const ServerId = { serverId: Type.Optional(Type.String({ maxLength: 255 })) };
const Text = Type.String();
/** A configuration file's text (the request body's own limit is lower still). */
const ConfigText = () => Type.String({ minLength: 1, maxLength: 1_048_576 });
/** A path inside the proxy's configuration directory. */
const ConfigPath = () => Type.String({ minLength: 1, maxLength: 4096 });
const ApplicationId = () => Type.String({ minLength: 1, maxLength: 255 });
const ConfigInput = Type.Object({ traefikConfig: ConfigText() });
const Port = Type.Object({ targetPort: Type.Integer({ minimum: 1, maximum: 65535 }), publishedPort: Type.Integer({ minimum: 1, maximum: 65535 }), protocol: Type.Enum(['tcp', 'udp', 'sctp']) });
interface Entry {
  id: string;
  name: string;
  type: 'file' | 'directory';
  children?: Entry[];
}
const DirectoryEntry = Type.Cyclic(
  { Entry: Type.Object({ id: Type.String(), name: Type.String(), type: Type.Enum(['file', 'directory']), children: Type.Optional(Type.Array(Type.Ref('Entry'))) }) },
  'Entry',
);

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const WebServerSettings = Type.Object({
  proxy: Type.String(),
  serverIp: Nullable(Type.String()),
  httpPort: Type.Integer(),
  httpsPort: Type.Integer(),
  generatedDomainBase: Type.String(),
  configDir: Nullable(Type.String()),
  host: Nullable(Type.String()),
  https: Type.Boolean(),
  certificateType: Type.Enum(['letsencrypt', 'none', 'custom']),
  letsEncryptEmail: Nullable(Type.String()),
});

/** listenPort: the port Berth's API listens on now (the config may say 0: chosen at listen time). */
export const proxySettingsProcedures = (s: ProxySettings, listenPort: () => number, address: ServerAddress) => {
  /** A Traefik operation of this machine's proxy that takes the peer's serverId: a server's is refused, saying why (refuseServer). */
  const onThisMachine = <I extends TSchema, O extends TSchema>(spec: { permission: Need; summary: string; input: I; output: O; handler: (input: Static<I>) => Promise<Static<O>> | Static<O> }) => ({
    scope: { host: 'serverId' },
    access: 'admin' as const,
    ...spec,
    handler: async (input: Static<I>, ctx: ProcedureContext) => {
      await s.refuseServer(ctx.principal, (input as { serverId?: string }).serverId);
      return spec.handler(input);
    },
  });
  const roleOps = (name: string, role: 'main' | 'webServer' | 'middlewares', what: string) => [
    settings.query(`read${name}`, {
      access: 'admin',
      permission: 'organization.update',
      summary: `The ${what} (Traefik only)`,
      input: Type.Object({}),
      output: Text,
      handler: async (_i, ctx) => {
        return s.readRole(role);
      },
    }),
    settings.mutation(`update${name}`, {
      access: 'admin',
      permission: 'organization.update',
      summary: `Replace the ${what}, checked as YAML first (Traefik only)`,
      input: ConfigInput,
      output: Type.Boolean(),
      handler: async ({ traefikConfig }, ctx) => {
        return s.writeRole(role, traefikConfig);
      },
    }),
  ];
  return [
    application.query('readTraefikConfig', {
      permission: 'traefikFiles.read',
      summary: "The application's own Traefik file (dynamic/<appName>.yml), null when it has none (Traefik only)",
      input: Type.Object({ applicationId: ApplicationId() }),
      output: Type.Union([Text, Type.Null()]),
      handler: async ({ applicationId }, ctx) => s.readWorkload((await s.application(applicationId, ctx.principal.organizationId, ctx.cradle.em)).appName),
    }),
    application.mutation('updateTraefikConfig', {
      permission: 'traefikFiles.write',
      summary: "Replace the application's own Traefik file, checked first: it may route only the application's own domains to the application; the next domain change writes it anew (Traefik only)",
      input: Type.Object({ applicationId: ApplicationId(), traefikConfig: ConfigText() }),
      output: Type.Boolean(),
      handler: async ({ applicationId, traefikConfig }, ctx) => s.writeOwnWorkload(await s.application(applicationId, ctx.principal.organizationId, ctx.cradle.em), traefikConfig, ctx.cradle.em),
    }),
    ...roleOps('TraefikConfig', 'main', 'main (static) configuration of Traefik'),
    ...roleOps('WebServerTraefikConfig', 'webServer', "dynamic configuration of Berth's own web server"),
    ...roleOps('MiddlewareTraefikConfig', 'middlewares', 'shared middlewares file'),
    settings.query(
      'readTraefikFile',
      onThisMachine({
        permission: 'traefikFiles.read',
        summary: "A file of the proxy's configuration directory (Traefik only; confined to that directory)",
        input: Type.Object({ path: ConfigPath(), ...ServerId }),
        output: Text,
        handler: ({ path }) => s.readFile(path),
      }),
    ),
    settings.mutation(
      'updateTraefikFile',
      onThisMachine({
        permission: 'traefikFiles.write',
        summary: "Write a file of the proxy's configuration directory, checked first (Traefik only; confined to that directory)",
        input: Type.Object({ path: ConfigPath(), traefikConfig: ConfigText(), ...ServerId }),
        output: Type.Boolean(),
        handler: ({ path, traefikConfig }) => s.writeFile(path, traefikConfig),
      }),
    ),
    settings.query(
      'readDirectories',
      onThisMachine({
        permission: 'traefikFiles.read',
        summary: "The proxy's configuration directory as a tree (Traefik only)",
        input: Type.Object(ServerId),
        output: Type.Array(DirectoryEntry),
        handler: () => s.directories() as Promise<Entry[]>,
      }),
    ),
    settings.query(
      'readTraefikEnv',
      onThisMachine({
        permission: 'organization.update',
        summary: "The environment of the proxy's service, KEY=value lines (Traefik only)",
        input: Type.Object(ServerId),
        output: Text,
        handler: async () => (await s.serviceSettings()).env,
      }),
    ),
    settings.mutation(
      'writeTraefikEnv',
      onThisMachine({
        permission: 'organization.update',
        summary: "Replace the environment of the proxy's service and restart it (Traefik only)",
        input: Type.Object({ env: Type.String({ maxLength: 65_536 }), ...ServerId }),
        output: Type.Boolean(),
        handler: ({ env }) => s.updateServiceSettings({ env }),
      }),
    ),
    settings.mutation(
      'reloadTraefik',
      onThisMachine({
        permission: 'organization.update',
        summary: 'Restart the proxy; its routes are kept (Traefik only)',
        input: Type.Object(ServerId),
        output: Type.Boolean(),
        handler: () => s.reload(),
      }),
    ),
    settings.mutation(
      'toggleDashboard',
      onThisMachine({
        permission: 'organization.update',
        summary: "Publish Traefik's dashboard on port 8080, or stop (Traefik only)",
        input: Type.Object({ enableDashboard: Type.Optional(Type.Boolean()), ...ServerId }),
        output: Type.Boolean(),
        handler: ({ enableDashboard }) => s.updateServiceSettings({ dashboard: enableDashboard ?? false }),
      }),
    ),
    settings.query(
      'haveTraefikDashboardPortEnabled',
      onThisMachine({
        permission: 'organization.update',
        summary: "Whether Traefik's dashboard is published (Traefik only)",
        input: Type.Object(ServerId),
        output: Type.Boolean(),
        handler: async () => (await s.serviceSettings()).dashboard,
      }),
    ),
    settings.query(
      'getTraefikPorts',
      onThisMachine({
        permission: 'organization.update',
        summary: 'Ports the proxy publishes besides http and https (Traefik only)',
        input: Type.Object(ServerId),
        output: Type.Array(Port),
        handler: async () => (await s.serviceSettings()).additionalPorts,
      }),
    ),
    settings.mutation(
      'updateTraefikPorts',
      onThisMachine({
        permission: 'organization.update',
        summary: 'Replace the ports the proxy publishes besides http and https, in host mode (Traefik only)',
        input: Type.Object({ additionalPorts: Type.Array(Port, { maxItems: 100 }), ...ServerId }),
        output: Type.Boolean(),
        handler: ({ additionalPorts }) => s.updateServiceSettings({ additionalPorts }),
      }),
    ),
    settings.query('getIp', {
      permission: 'member',
      scope: 'organization',
      summary:
        "This server's public address: serverIp (BERTH_SERVER_IP, or the one settings.updateServerIp stored), else the address of the default route's interface; never asks a service on the internet",
      input: Type.Object({}),
      output: Type.String(),
      handler: () => address.current(),
    }),
    settings.mutation('updateServerIp', {
      permission: 'organization.update',
      access: 'admin',
      summary:
        "Set this server's public address (serverIp: generated domains point at it, the preflight expects hosts to resolve to it), kept across restarts; '' returns to the configured one. The instance's operators only; answers the web-server settings",
      input: Type.Object({ serverIp: Type.String({ maxLength: 45, description: "an IPv4 or IPv6 address; '' forgets the stored one" }) }),
      output: WebServerSettings,
      handler: async ({ serverIp }, ctx) => {
        await address.set(serverIp);
        return s.webServerSettings();
      },
    }),
    settings.query('getWebServerSettings', {
      permission: 'organization.update',
      access: 'admin',
      summary: "What the proxy and domains of this server run with: the provider, the server's address, the ports, Berth's own domain",
      input: Type.Object({}),
      output: WebServerSettings,
      handler: async (_i, ctx) => {
        return s.webServerSettings();
      },
    }),
    settings.mutation('assignDomainServer', {
      permission: 'organization.update',
      access: 'admin',
      summary: "Serve Berth's own API at a domain through the proxy (an empty host takes it away); answers the web-server settings",
      description: "The proxy reaches Berth through the engine's docker_gwbridge gateway, so Berth must listen on it (host 0.0.0.0).",
      input: Type.Object({
        host: Type.Union([Type.String({ maxLength: 253 }), Type.Null()]),
        certificateType: Type.Enum(['letsencrypt', 'none', 'custom'], { default: 'none' }),
        letsEncryptEmail: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
        https: Type.Optional(Type.Boolean()),
      }),
      output: WebServerSettings,
      handler: async (input, ctx) => {
        return s.assignDomainServer(input, listenPort());
      },
    }),
  ];
};
