// The peer's settings.* of the Requests page: whether this machine's proxy writes an access log,
// and turning it on or off (the proxy serves the whole instance: its operators only).
import { Type, router } from '@berth/core';
import type { AccessLog } from './access-log.ts';

const settings = router('settings', 'instance');

export const accessLogProcedures = (log: AccessLog) => [
  settings.query('haveActivateRequests', {
    permission: 'member',
    summary: "Whether this machine's proxy writes an access log: Traefik's configuration (traefik.yml) names one; false for another proxy, or none",
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: () => log.active(),
  }),
  settings.mutation('toggleRequests', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      "Turn the proxy's access log on or off (traefik.yml's accessLog, the peer's file dynamic/access.log); it applies when the proxy restarts (settings.reloadTraefik). Answers false, changing nothing, when the proxy keeps no Traefik configuration (Caddy, or none)",
    input: Type.Object({ enable: Type.Boolean() }),
    output: Type.Boolean(),
    handler: ({ enable }) => log.toggle(enable),
  }),
];
