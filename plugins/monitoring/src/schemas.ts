// What the monitoring operations take and answer: the peer's metricsConfig (the spec's members
// unchanged; Berth's optional thresholdSamples, thresholdCooldownMinutes and thresholds.disk), and
// the figures in the shapes of the peer's monitoring agent.
import { Type, schema, type Static } from '@berth/core';

const { NonEmpty } = schema;

export const MetricsConfigInput = Type.Object({
  server: Type.Object({
    refreshRate: Type.Number({ minimum: 2, maximum: 86_400, description: 'seconds between two samples of the host' }),
    port: Type.Number({ minimum: 1, maximum: 65_535, description: 'the port in the address getServerMetrics is given for this server' }),
    token: Type.String({ maxLength: 255, description: 'what getServerMetrics must be given as token' }),
    urlCallback: Type.String({ format: 'uri', maxLength: 2048, description: "where alerts also go, in the peer's receiveNotification body (not when it is Berth's own address)" }),
    retentionDays: Type.Number({ minimum: 1, maximum: 3650, description: 'days samples are kept' }),
    cronJob: NonEmpty({ maxLength: 255, description: 'when old samples are pruned (cron)' }),
    thresholds: Type.Object({
      cpu: Type.Number({ minimum: 0, maximum: 100, description: 'CPU percentage that alerts (0: off)' }),
      memory: Type.Number({ minimum: 0, maximum: 100, description: 'memory percentage that alerts (0: off)' }),
      disk: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: "Berth's: percentage of the root mount that alerts (0: off)" })),
    }),
    thresholdSamples: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 3, description: "Berth's: samples in a row over a threshold before it alerts" })),
    thresholdCooldownMinutes: Type.Optional(Type.Number({ minimum: 0, maximum: 10_080, default: 30, description: "Berth's: minutes without another alert after one" })),
  }),
  containers: Type.Object({
    refreshRate: Type.Number({ minimum: 2, maximum: 86_400, description: 'seconds between two samples of the containers' }),
    services: Type.Object({
      include: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 })),
      exclude: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 })),
    }),
  }),
});
export type MetricsConfigInput = Static<typeof MetricsConfigInput>;

/** A metricsConfig as stored and answered (the peer's members, `type` included). */
export type MetricsConfig = MetricsConfigInput & { server: { type: string } };

export const LocalSetupInput = Type.Object({ metricsConfig: MetricsConfigInput });
export const ServerSetupInput = Type.Object({ serverId: NonEmpty({ maxLength: 255 }), metricsConfig: MetricsConfigInput });

/** The local host's monitoring settings as admin.setupMonitoring answers them. */
export const LocalMonitoring = Type.Object({
  serverIp: Type.Union([Type.String(), Type.Null()]),
  metricsConfig: Type.Object(
    { server: Type.Object({ type: Type.String() }, { additionalProperties: true }), containers: Type.Object({}, { additionalProperties: true }) },
    { additionalProperties: true },
  ),
});

/** A metricsConfig as the peer's clients read it: the peer's members, and Berth's optional ones where they were given. */
export const MetricsConfigView = Type.Object({
  server: Type.Object({
    type: Type.String({ description: 'Dokploy: this machine; Remote: a server' }),
    refreshRate: Type.Number(),
    port: Type.Number(),
    token: Type.String(),
    urlCallback: Type.String(),
    retentionDays: Type.Number(),
    cronJob: Type.String(),
    thresholds: Type.Object({ cpu: Type.Number(), memory: Type.Number(), disk: Type.Optional(Type.Number()) }),
    thresholdSamples: Type.Optional(Type.Integer()),
    thresholdCooldownMinutes: Type.Optional(Type.Number()),
  }),
  containers: Type.Object({ refreshRate: Type.Number(), services: Type.Object({ include: Type.Array(Type.String()), exclude: Type.Array(Type.String()) }) }),
});

/** user.getMetricsToken's answer, the peer's: this machine's address, its paid-features flag and its metricsConfig. */
export const MetricsTokenView = Type.Object({
  serverIp: Type.Union([Type.String(), Type.Null()], { description: "this machine's address (settings.updateServerIp), null until set" }),
  enabledFeatures: Type.Boolean({ description: "the peer's paid-features flag of its owner, which a self-hosted peer never sets: false" }),
  metricsConfig: MetricsConfigView,
});

const DataPoints = () => Type.String({ minLength: 1, maxLength: 16, pattern: '^(all|[0-9]+)$', description: 'how many of the latest samples: a count, or all' });

export const ServerMetricsInput = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, description: "the address the peer's clients build for the server: http://<ipAddress>:<metricsConfig.server.port>/metrics" }),
  token: Type.String({ maxLength: 255, description: "the server's metricsConfig.server.token" }),
  dataPoints: DataPoints(),
});

export const ContainerMetricsInput = Type.Object({ ...ServerMetricsInput.properties, appName: Type.String({ maxLength: 255, description: "the service's appName" }) });

/** One host sample in the peer agent's shape (figures as strings with two decimals, as it answers them). */
export const ServerMetric = Type.Object({
  cpu: Type.String({ description: 'percentage of all cores busy over the interval' }),
  cpuModel: Type.String(),
  cpuCores: Type.Integer(),
  cpuPhysicalCores: Type.Integer(),
  cpuSpeed: Type.Number(),
  os: Type.String(),
  distro: Type.String(),
  kernel: Type.String(),
  arch: Type.String(),
  memUsed: Type.String({ description: 'percentage of MemTotal used (MemTotal − MemAvailable)' }),
  memUsedGB: Type.String(),
  memTotal: Type.String({ description: 'GiB' }),
  uptime: Type.Integer({ description: 'seconds' }),
  diskUsed: Type.String({ description: 'percentage of the root mount used' }),
  totalDisk: Type.String({ description: 'GiB' }),
  networkIn: Type.String({ description: 'MiB received since boot, every interface but loopback' }),
  networkOut: Type.String({ description: 'MiB sent since boot, every interface but loopback' }),
  timestamp: Type.String(),
});
export type ServerMetric = Static<typeof ServerMetric>;

/** One container sample in the peer agent's shape. */
export const ContainerMetric = Type.Object({
  timestamp: Type.String(),
  CPU: Type.Number({ description: 'percentage of one core (100 = one core busy), over the interval' }),
  Memory: Type.Object({ percentage: Type.Number(), used: Type.Number(), total: Type.Number(), usedUnit: Type.String(), totalUnit: Type.String() }),
  Network: Type.Object({ input: Type.Number(), output: Type.Number(), inputUnit: Type.String(), outputUnit: Type.String() }),
  BlockIO: Type.Object({ read: Type.Number(), write: Type.Number(), readUnit: Type.String(), writeUnit: Type.String() }),
  Container: Type.String(),
  ID: Type.String(),
  Name: Type.String(),
});
export type ContainerMetric = Static<typeof ContainerMetric>;
