// The reverse proxy in front of workloads. One proxy provider is active (`proxy` in the config,
// env BERTH_PROXY): the domains plugin hands it, per workload, the complete set of routes,
// redirects and basic-auth users that workload has, and the provider turns them into its own
// configuration (Caddy's JSON through its admin API, Traefik's file-provider YAML, ...). The
// provider runs the proxy itself as a Swarm service on the platform network, publishing its
// ports in host mode, and reaches a workload through `tasks.<appName>` (the DNS name that
// resolves to the workload's task addresses on that network: service VIPs need IPVS, which not
// every host has). A workload on a server is routed by that server's own proxy: the provider's
// `forServer` answers a provider of the same settings whose files are written on that server.
import type Docker from 'dockerode';
import type { RunOptions, RunResult } from './host-provider.ts';

export type CertificateType = 'letsencrypt' | 'none' | 'custom';

/** One domain of a workload, as the proxy serves it. */
export interface ProxyRoute {
  /** The domain's record id. */
  domainId: string;
  /** The domain's serial number, unique over all domains: router names derive from it (`<appName>-router-<n>`). */
  uniqueConfigKey: number;
  /** The host name in ASCII (an internationalised name arrives in punycode). */
  host: string;
  /** The public path prefix ('/' = every path). */
  path: string;
  /** The path prefix the workload expects ('/' = none): added after stripping. */
  internalPath: string;
  /** Remove `path` before the request reaches the workload. */
  stripPath: boolean;
  /** Serve over TLS (and redirect plain http to https). */
  https: boolean;
  /** Where the TLS certificate comes from: ACME (letsencrypt), the proxy's own (none), an uploaded one or a named resolver (custom). */
  certificateType: CertificateType;
  /** The resolver a custom certificate names (Traefik's certResolver); null = an uploaded certificate. */
  customCertResolver: string | null;
  /** The container port the workload listens on. */
  port: number;
  /** For a compose workload, the service within it; null for an application. */
  serviceName: string | null;
  /** An entry point of the proxy other than web/websecure; null = the defaults. */
  customEntrypoint: string | null;
  /** Middlewares (by name, defined in the proxy's shared middlewares) appended to the route. */
  middlewares: string[];
  /** A fixed address (host:port) to send requests to instead of the workload's tasks (Berth's own web server). */
  upstream?: string;
  /** Each request is first asked of Berth (forward auth): absent = none. */
  forwardAuth?: ProxyForwardAuth;
}

/** Forward auth of a route: the proxy sends each request's method, URI and headers to Berth first, and passes it on only when Berth answers 2xx. */
export interface ProxyForwardAuth {
  /** Berth's address (host:port) as the proxy reaches it. */
  upstream: string;
  /** The path and query Berth answers the check on (it names the domain). */
  uri: string;
  /** Headers of Berth's 2xx answer set on the request the workload gets (who signed in). */
  copyHeaders: string[];
  /** Berth's session cookie: taken out of the request before the workload gets it. */
  cookie: string;
}

/** A redirect rule of a workload (the regex applies to the full request URL). */
export interface ProxyRedirect {
  redirectId: string;
  uniqueConfigKey: number;
  regex: string;
  /** `$1`/`${1}` name the regex's groups. */
  replacement: string;
  permanent: boolean;
}

/** A basic-auth user of a workload; the password is hashed (bcrypt), never plain. */
export interface ProxyBasicAuthUser {
  username: string;
  passwordHash: string;
}

/** Everything the proxy serves for one workload: applied as a whole, replacing what it had. */
export interface ProxyWorkloadConfig {
  /** The workload's Swarm service name: the upstream is `tasks.<appName>` (or, for compose, its service's). */
  appName: string;
  routes: ProxyRoute[];
  redirects: ProxyRedirect[];
  basicAuth: ProxyBasicAuthUser[];
}

/** An uploaded certificate, opened, for the provider to write where the proxy reads it. */
export interface ProxyCertificate {
  certificateId: string;
  /** A directory name of its own (the peer's certificatePath). */
  certificatePath: string;
  certificateData: string;
  privateKey: string;
}

/** Where the proxy runs: the engine, the platform network, the labels of the engine objects it creates. */
export interface ProxyEngine {
  docker: Docker;
  network: string;
  /** The organizations' networks it joins too (each organization's workloads are on their own network). */
  networks?: string[];
  labels: Record<string, string>;
  /** Makes an image present on that engine before the service uses it (a server's is copied from this machine's); absent: the engine has what it needs. */
  provideImage?(image: string): Promise<void>;
}

/** A server a proxy runs on: its commands, through the server's pooled connection. */
export interface ProxyServerHost {
  /** The server record's id (the provider keeps its own copy of the files under it). */
  serverId: string;
  /** Runs argv on the server (an argument array; a non-zero exit is an answer). */
  run(argv: readonly string[], options?: RunOptions): Promise<RunResult>;
}

/** The certificate the proxy holds for a host. */
export interface ProxyCertificateState {
  /** valid: held and not expired; pending: none yet, the proxy is obtaining it; failed: the last attempt failed; none: no TLS for the host. */
  state: 'valid' | 'pending' | 'failed' | 'none';
  issuer: string | null;
  notAfter: string | null;
  /** What went wrong, in words a person can act on (the proxy's own last error for the host). */
  reason: string | null;
}

/** A file of the proxy's configuration that the settings operations read and write. */
export type ProxyFileRole = 'main' | 'webServer' | 'middlewares';

/** How the proxy's service runs, besides its routes (the settings operations change it). */
export interface ProxyServiceSettings {
  /** The proxy's own dashboard published (Traefik's on port 8080). */
  dashboard: boolean;
  /** Ports published besides http and https (host mode). */
  additionalPorts: { targetPort: number; publishedPort: number; protocol: 'tcp' | 'udp' | 'sctp' }[];
  /** KEY=value lines of the service's environment. */
  env: string;
}

export interface ProxyProvider {
  /** Its id in the config (`caddy`, `traefik`). */
  readonly id: string;
  /** The directory of its configuration on this host: file reads and writes are confined to it. */
  readonly configDir: string;
  /** Whether its files are Traefik's (the Traefik-named settings operations need it). */
  readonly traefikFiles: boolean;
  /**
   * How it reaches the routed services of a compose stack: `labels`, it reads the peer's Traefik
   * labels on the services (the compose plugin writes them); `alias`, it serves the routes Berth
   * hands it (applyWorkload), whose upstream is the service's alias `<appName>-<serviceName>` on the
   * platform network (the compose plugin adds it; a stack's service is `tasks.<appName>_<serviceName>`).
   */
  readonly composeRouting: 'labels' | 'alias';
  /**
   * The proxy of a server: the same settings, its service on the server's engine and the files it
   * reads written on that server (absent: the provider runs only on this machine, and a domain of a
   * workload on a server is refused naming it). Answered once per server and kept.
   */
  forServer?(server: ProxyServerHost): ProxyProvider;
  /** Writes its own default files when missing, without touching the engine (optional). */
  prepare?(): Promise<void>;
  /** Creates or updates the proxy's service (idempotent) and answers once it accepts configuration. */
  ensure(engine: ProxyEngine): Promise<void>;
  /** Replaces everything the proxy serves for the workload; no routes = it serves nothing for it. */
  applyWorkload(config: ProxyWorkloadConfig): Promise<void>;
  /** Forgets the workload entirely (its file, its routes). */
  removeWorkload(appName: string): Promise<void>;
  /** Serves Berth's own API at a domain (its routes carry `upstream`), in the provider's web-server file; null = no longer. */
  applyWebServer(config: ProxyWorkloadConfig | null): Promise<void>;
  /** Writes an uploaded certificate where the proxy reads it, and has it used. */
  writeCertificate(certificate: ProxyCertificate): Promise<void>;
  removeCertificate(certificatePath: string): Promise<void>;
  /** Restarts the proxy; the routes it serves are kept. */
  reload(engine: ProxyEngine): Promise<void>;
  /**
   * The root certificate (PEM) of the proxy's own CA, the issuer of https routes whose
   * certificateType is none, for clients to trust (a self-hosted registry's nodes); null until the
   * proxy has made it. Absent: the proxy has no CA of its own.
   */
  ownCaRoot?(): Promise<string | null>;
  /** The certificate state for a host (preflight). */
  certificateState(host: string, https: boolean): Promise<ProxyCertificateState>;
  /** The path, relative to configDir, of one of its files; null when it has none of that role. */
  fileOf(role: ProxyFileRole): string | null;
  /** The path, relative to configDir, of a workload's own file; null when it keeps none per workload. */
  workloadFile(appName: string): string | null;
  /** Checks a configuration file's text before it is written (a syntax error is thrown with its message). */
  validateFile(relativePath: string, text: string): void;
  /** How its service runs. */
  serviceSettings(): Promise<ProxyServiceSettings>;
  /** Changes how its service runs and updates the service. */
  updateServiceSettings(patch: Partial<ProxyServiceSettings>, engine: ProxyEngine): Promise<void>;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `proxy.<id>`: the reverse proxy in front of workloads (one is active: config `proxy`). */
    proxy: ProxyProvider;
  }
}
