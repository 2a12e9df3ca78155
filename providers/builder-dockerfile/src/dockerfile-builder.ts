// Build type "dockerfile": the Dockerfile of the source, built by the engine.
import { statSync } from 'node:fs';
import path from 'node:path';
import type { Builder, BuildRequest } from '@berth/core';
import { buildContext } from './engine-build.ts';
import { contextDirOf, resolveInside } from './paths.ts';

export class DockerfileBuilder implements Builder {
  readonly id = 'dockerfile' as const;

  async build(request: BuildRequest): Promise<void> {
    const contextDir = contextDirOf(request);
    const name = request.dockerfile?.trim() || 'Dockerfile';
    const file = resolveInside(contextDir, name, 'The Dockerfile path');
    if (!statSync(file).isFile()) throw new Error(`The Dockerfile "${name}" is not a file`);
    const dockerfile = path.relative(contextDir, file).split(path.sep).join('/');
    await buildContext({
      engine: request.engine,
      contextDir,
      dockerfile,
      imageTag: request.imageTag,
      buildArgs: request.buildArgs,
      target: request.dockerBuildStage?.trim() || null,
      labels: request.labels,
      secrets: request.secrets,
      buildSecrets: request.buildSecrets ?? {},
      signal: request.signal,
      log: request.log,
    });
  }
}
