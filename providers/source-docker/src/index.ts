// @berth/provider-source-docker: source type "docker".
import { defineProvider, Type } from '@berth/core';
import { DockerSource } from './docker-source.ts';

export default defineProvider({ contract: 'source', id: 'docker', options: Type.Object({}, { additionalProperties: false }), create: () => new DockerSource() });
export { DockerSource };
