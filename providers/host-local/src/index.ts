// @berth/provider-host-local: host provider "local", the machine Berth runs on (connect(null)).
import { defineProvider, Type } from '@berth/core';
import { LocalHostProvider } from './local-host.ts';

export default defineProvider({ contract: 'host', id: 'local', options: Type.Object({}, { additionalProperties: false }), create: () => new LocalHostProvider() });
export { LocalHostProvider, LocalHost } from './local-host.ts';
