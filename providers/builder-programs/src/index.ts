// @berth/provider-builder-programs: shared by the providers of build types nixpacks,
// heroku_buildpacks, paketo_buildpacks and railpack (each its own package), and the program
// runner (argument arrays, streamed lines, process-group abort) the git source reuses.
export { ProgramBuilder, programOptions, programProvider, type ProgramBuilderOptions } from './program-builder.ts';
export { programBuildTypes, recipes, type ProgramBuildType } from './recipes.ts';
export { findProgram, runProgram, type ProgramRun, type ProgramExit } from './run-program.ts';
