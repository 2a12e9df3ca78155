// @berth/provider-builder-static: build type "static".
import { defineProvider, Type } from '@berth/core';
import { IMAGE_REF } from '@berth/provider-builder-dockerfile/engine';
import { StaticBuilder } from './static-builder.ts';

export const StaticOptions = Type.Object({
  image: Type.Optional(Type.String({ pattern: IMAGE_REF.source, description: 'The web-server image (default: config staticImage)' })),
  root: Type.Optional(Type.String({ pattern: '^/', description: 'The directory it serves (default: config staticRoot)' })),
}, { additionalProperties: false });

export default defineProvider({
  contract: 'builder',
  id: 'static',
  options: StaticOptions,
  create: (options, { config }) => new StaticBuilder({ image: options.image ?? config.staticImage, root: options.root ?? config.staticRoot }),
});
export { StaticBuilder, type StaticBuilderOptions } from './static-builder.ts';
