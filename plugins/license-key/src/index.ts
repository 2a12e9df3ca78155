// The licence plugin: licenseKey.*, answered as an instance where every feature is on. The peer
// keeps its governance features behind a paid key; Berth serves them to everyone, so there is no
// key to keep and nothing to store.
import { definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { licenseKeyProcedures } from './procedures.ts';

export default definePlugin({
  name: 'license-key',
  version: pkg.version,
  setup(berth) {
    berth.procedures(...licenseKeyProcedures);
  },
});
