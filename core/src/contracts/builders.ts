// Builders turn a fetched source into an image on an engine. Each build type (dockerfile,
// static, nixpacks...) is a provider implementing Builder; the application plugin picks
// one by the record's buildType through the `builders` registry. Sources are fetched by
// SourceFetchers, registered the same way.
import type Docker from 'dockerode';

export const buildTypes = ['dockerfile', 'heroku_buildpacks', 'paketo_buildpacks', 'nixpacks', 'static', 'railpack'] as const;
export type BuildType = (typeof buildTypes)[number];

/** Where a build writes its progress and how it is stopped. */
export interface BuildIo {
  /** Aborts the build (cancel, kill, timeout): programs are killed, engine requests dropped. */
  signal: AbortSignal;
  /** One line of build output for the deployment log. */
  log(line: string): void;
}

export interface BuildRequest extends BuildIo {
  engine: Docker;
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
  /** The tag to give the result, e.g. "berth/my-app:<deploymentId>". */
  imageTag: string;
  labels: Record<string, string>;
}

export interface Builder {
  readonly id: BuildType;
  /** Builds the image tagged request.imageTag; throws with a message fit for the deployment log. */
  build(request: BuildRequest): Promise<void>;
}

/** The data of a source, as stored on the workload (its kind decides which fetcher reads it). */
export interface SourceSpec {
  kind: string;
  [field: string]: unknown;
}

export interface FetchRequest extends BuildIo {
  source: SourceSpec;
  /** An empty per-deployment directory to fetch into. */
  workDir: string;
}

export interface SourceFetcher {
  /** The SourceSpec.kind it reads (git, github, gitlab, bitbucket, gitea...). */
  readonly kind: string;
  /** Fetches into workDir; answers a short description of what was fetched (e.g. the commit). */
  fetch(request: FetchRequest): Promise<{ revision: string | null }>;
}

export class BuilderRegistry {
  readonly #builders = new Map<string, Builder>();
  readonly #fetchers = new Map<string, SourceFetcher>();
  addBuilder(builder: Builder): void {
    this.#builders.set(builder.id, builder);
  }
  addFetcher(fetcher: SourceFetcher): void {
    this.#fetchers.set(fetcher.kind, fetcher);
  }
  builder(id: string): Builder {
    const b = this.#builders.get(id);
    if (!b) throw new Error(`No builder for build type "${id}" is installed`);
    return b;
  }
  fetcher(kind: string): SourceFetcher {
    const f = this.#fetchers.get(kind);
    if (!f) throw new Error(`Sources of kind "${kind}" cannot be fetched yet: no fetcher is installed for them`);
    return f;
  }
}

declare module '../container.ts' {
  interface Cradle {
    /** Builders and source fetchers (filled by the plugins that ship them). */
    builders: BuilderRegistry;
  }
}
