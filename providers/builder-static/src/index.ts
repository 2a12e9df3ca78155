// @berth/provider-builder-static: build type "static".
import { defineProvider } from '@berth/core';
import { StaticBuilder, StaticOptions } from './static-builder.ts';

export default defineProvider({ contract: 'builder', id: 'static', options: StaticOptions, create: options => new StaticBuilder(options) });
export { StaticBuilder, StaticOptions, type StaticBuilderOptions } from './static-builder.ts';
