// @berth/builder-programs: build types nixpacks, heroku_buildpacks, paketo_buildpacks and railpack.
export { ProgramBuilder, type ProgramBuilderOptions } from './program-builder.ts';
export { programBuildTypes, recipes, type ProgramBuildType } from './recipes.ts';
