// @berth/builder-programs: build types nixpacks, heroku_buildpacks, paketo_buildpacks and railpack,
// and the program runner (argument arrays, streamed lines, process-group abort) the git fetcher reuses.
export { ProgramBuilder, type ProgramBuilderOptions } from './program-builder.ts';
export { programBuildTypes, recipes, type ProgramBuildType } from './recipes.ts';
export { findProgram, runProgram, type ProgramRun, type ProgramExit } from './run-program.ts';
