// @berth/provider-builder-dockerfile: build type "dockerfile" (the engine build other builders
// reuse is the `./engine` export).
import { defineProvider, Type } from '@berth/core';
import { DockerfileBuilder } from './dockerfile-builder.ts';

export default defineProvider({ contract: 'builder', id: 'dockerfile', options: Type.Object({}, { additionalProperties: false }), create: () => new DockerfileBuilder() });
export { DockerfileBuilder };
