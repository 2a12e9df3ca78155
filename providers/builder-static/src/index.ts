// @berth/builder-static: build type "static".
export { StaticBuilder, type StaticBuilderOptions } from './static-builder.ts';
