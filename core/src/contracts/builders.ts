// Builders turn a fetched source into an image on an engine. Each build type (dockerfile,
// static, nixpacks...) is a provider of contract "builder" with the build type as its id;
// the application plugin resolves `builder.<buildType>` through the providers registry, and
// the enabled ids are the build types the API accepts.
import type Docker from 'dockerode';

/** Where a build writes its progress and how it is stopped. */
export interface BuildIo {
  /** Aborts the build (cancel, kill, timeout): programs are killed, engine requests dropped. */
  signal: AbortSignal;
  /** One line of build output for the deployment log. */
  log(line: string): void;
}

export interface BuildRequest extends BuildIo {
  /** The engine that builds and keeps the image: the workload's host's (a server's over its connection). */
  engine: Docker;
  /** DOCKER_HOST for a builder program run on this machine to reach that engine; absent: this machine's own engine. */
  dockerHost?: string;
  /** The checked-out source (absolute path); buildPath below is relative to it. */
  sourceDir: string;
  /** Sub-directory of the source that is the application (the build context), '' or '.' = the root. */
  buildPath: string;
  /** Dockerfile path relative to the context (dockerfile builder), default "Dockerfile". */
  dockerfile: string | null;
  /** Context path relative to buildPath (dockerfile builder), default the buildPath itself. */
  dockerContextPath: string | null;
  /** Multi-stage target (dockerfile builder). */
  dockerBuildStage: string | null;
  /** Directory of files to serve (static builder), relative to the context. */
  publishDirectory: string | null;
  buildArgs: Record<string, string>;
  /** Values never to show in the log (build args may carry secrets). */
  secrets: string[];
  /** Build secrets by id, mounted by a Dockerfile's `RUN --mount=type=secret,id=KEY`, never build args; builders without Dockerfile say they skip them. */
  buildSecrets?: Record<string, string>;
  /** The tag to give the result, e.g. "berth/my-app:<deploymentId>". */
  imageTag: string;
  labels: Record<string, string>;
}

export interface Builder {
  /** The build type it serves (the provider's id). */
  readonly id: string;
  /** Builds the image tagged request.imageTag; throws with a message fit for the deployment log. */
  build(request: BuildRequest): Promise<void>;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `builder.<buildType>`: makes an image from a fetched source. */
    builder: Builder;
  }
}
