// @berth/provider-builder-dockerfile/engine: the engine build (context tar, streamed and masked
// output, cancellation) and the path checks that other builders and sources reuse, without
// importing this provider's descriptor.
export { buildContext, buildWrittenContext, cancelled, skipBuildSecrets, masker, MASK, IMAGE_REF, BUILD_ARG, type ContextBuild } from './engine-build.ts';
export { resolveInside, appDirOf, contextDirOf } from './paths.ts';
