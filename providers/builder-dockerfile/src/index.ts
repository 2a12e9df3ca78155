// @berth/builder-dockerfile: build type "dockerfile", and the engine build other builders reuse.
export { DockerfileBuilder } from './dockerfile-builder.ts';
export { buildContext, cancelled, masker, MASK, IMAGE_REF, BUILD_ARG, type ContextBuild } from './engine-build.ts';
export { resolveInside, appDirOf, contextDirOf } from './paths.ts';
