// Build types that need a program on the host (nixpacks, pack, railpack). The program builds
// through the host's Docker; the image it tags is checked on the request's engine afterwards.
import { defineProvider, Type, type Builder, type BuildRequest } from '@berth/core';
import { appDirOf, buildWrittenContext, BUILD_ARG, cancelled, IMAGE_REF, masker, skipBuildSecrets } from '@berth/provider-builder-dockerfile/engine';
import { recipes, type ProgramBuildType, type ProgramRecipe } from './recipes.ts';
import { findProgram, runProgram } from './run-program.ts';

const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

/** A build type's provider options: the builder image only where the program takes one (pack). */
export function programOptions(buildType: ProgramBuildType) {
  return Type.Object(
    {
      searchPath: Type.Optional(Type.String({ minLength: 1, description: "Where the program is looked up (default: this process's PATH)" })),
      ...(recipes[buildType].defaultBuilder === null
        ? {}
        : { builder: Type.Optional(Type.String({ pattern: IMAGE_REF.source, description: `The buildpacks builder image (default: ${recipes[buildType].defaultBuilder})` })) }),
    },
    { additionalProperties: false },
  );
}

/** The provider of one program-built type: what each of their packages exports. */
export function programProvider(buildType: ProgramBuildType) {
  return defineProvider({ contract: 'builder', id: buildType, options: programOptions(buildType), create: options => new ProgramBuilder(buildType, options as ProgramBuilderOptions) });
}

export interface ProgramBuilderOptions {
  /** Where the program is looked up (default: this process's PATH). */
  searchPath?: string;
  /** The buildpacks builder image (heroku_buildpacks, paketo_buildpacks), instead of the type's default. */
  builder?: string;
}

/** The environment the program gets: this process's, less Berth's own secrets. */
function programEnv(dockerHost?: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BERTH_') && k !== 'DATABASE_URL'));
  // A workload on a server: the program builds on the server's engine through the forwarded socket.
  return dockerHost ? { ...env, DOCKER_HOST: dockerHost } : env;
}

export class ProgramBuilder implements Builder {
  readonly id: ProgramBuildType;
  readonly #recipe: ProgramRecipe;
  readonly #searchPath: string | undefined;
  readonly #builder: string | null;

  constructor(buildType: ProgramBuildType, options: ProgramBuilderOptions = {}) {
    if (!Object.hasOwn(recipes, buildType)) throw new Error(`"${buildType}" is not a build type run by a program`);
    this.id = buildType;
    this.#recipe = recipes[buildType];
    this.#searchPath = options.searchPath;
    if (options.builder !== undefined) {
      if (this.#recipe.defaultBuilder === null) throw new Error(`The ${buildType} build type takes no builder image`);
      if (!IMAGE_REF.test(options.builder)) throw new Error(`The builder image "${options.builder}" is not a valid image reference`);
    }
    this.#builder = options.builder ?? null;
  }

  /** The program this build type runs (e.g. "pack"). */
  get program(): string {
    return this.#recipe.program;
  }

  async build(request: BuildRequest): Promise<void> {
    const { program } = this.#recipe;
    const file = findProgram(program, this.#searchPath ?? process.env.PATH ?? '');
    if (!file) throw new Error(`The ${this.id} build type needs the "${program}" program on the host, and it is not installed`);
    if (!IMAGE_REF.test(request.imageTag)) throw new Error(`"${request.imageTag}" is not a valid image tag`);
    for (const name of Object.keys(request.buildArgs)) {
      if (!BUILD_ARG.test(name)) throw new Error(`Build argument "${name}" is not a valid name (letters, digits and _, not starting with a digit)`);
    }
    for (const key of Object.keys(request.labels)) {
      if (!LABEL_KEY.test(key)) throw new Error(`Label "${key}" is not a valid label name`);
    }
    const appDir = appDirOf(request);
    skipBuildSecrets(request, this.id);
    const args = this.#recipe.args({ appDir, imageTag: request.imageTag, env: Object.entries(request.buildArgs), labels: Object.entries(request.labels), builder: this.#builder });
    const mask = masker(request.secrets);
    request.log(mask(`$ ${[program, ...args].join(' ')}`));
    const exit = await runProgram({ file, args, cwd: appDir, env: programEnv(request.dockerHost), signal: request.signal, line: text => request.log(mask(text)) }, () => cancelled(request.signal));
    if (exit.code !== 0) {
      const how = exit.signal ? `was stopped by ${exit.signal}` : `failed with exit code ${exit.code}`;
      throw new Error(mask(`${program} ${how}${exit.lastLine ? `: ${exit.lastLine}` : ''}`));
    }
    try {
      await request.engine.getImage(request.imageTag).inspect();
    } catch {
      throw new Error(`${program} finished but the engine has no image ${request.imageTag}: does it build on the same Docker host?`);
    }
    if (!this.#recipe.labels && Object.keys(request.labels).length) await addLabels(program, request);
  }
}

/**
 * Puts the owner labels on an image a program built without them: a one-line build on top
 * (`FROM` the image, the labels through the build API) under the same tag. It adds no layer and
 * keeps the image's config (command, entrypoint, env, user).
 */
async function addLabels(program: string, request: BuildRequest): Promise<void> {
  request.log(`Adding Berth's labels to ${request.imageTag} (${program} has no label flag)`);
  await buildWrittenContext(request, { prefix: 'berth-labels-', dockerfile: `FROM ${request.imageTag}\n`, log: () => {} });
}
