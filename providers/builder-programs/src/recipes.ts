// How each program-built type is invoked: one entry per build type, so the builder itself
// never branches on a type's name. Arguments are arrays: no shell ever reads them.

export interface ProgramInvocation {
  /** The application directory (absolute). */
  appDir: string;
  imageTag: string;
  /** Build arguments, passed to the build as environment variables. */
  env: [string, string][];
  labels: [string, string][];
  /** The buildpacks builder image (pack only). */
  builder: string | null;
}

export interface ProgramRecipe {
  /** The executable looked up on PATH. */
  program: string;
  /** The builder image used when none is configured (pack only). */
  defaultBuilder: string | null;
  /** The program sets the image's labels itself (a --label flag); else the builder adds them afterwards. */
  labels: boolean;
  args(i: ProgramInvocation): string[];
}

const envFlags = (i: ProgramInvocation) => i.env.flatMap(([k, v]) => ['--env', `${k}=${v}`]);

const pack = (defaultBuilder: string): ProgramRecipe => ({
  program: 'pack',
  defaultBuilder,
  // pack build has no label flag: the builder labels the image afterwards.
  labels: false,
  args: i => ['build', i.imageTag, '--path', i.appDir, '--builder', i.builder ?? defaultBuilder, ...envFlags(i)],
});

export const recipes = {
  nixpacks: {
    program: 'nixpacks',
    defaultBuilder: null,
    labels: true,
    args: i => ['build', i.appDir, '--name', i.imageTag, ...envFlags(i), ...i.labels.flatMap(([k, v]) => ['--label', `${k}=${v}`])],
  },
  heroku_buildpacks: pack('heroku/builder:24'),
  paketo_buildpacks: pack('paketobuildpacks/builder-jammy-full'),
  railpack: {
    program: 'railpack',
    defaultBuilder: null,
    // railpack build has no label flag either.
    labels: false,
    args: i => ['build', i.appDir, '--name', i.imageTag, '--progress', 'plain', ...envFlags(i)],
  },
} satisfies Record<string, ProgramRecipe>;

export type ProgramBuildType = keyof typeof recipes;
export const programBuildTypes = Object.keys(recipes) as ProgramBuildType[];
