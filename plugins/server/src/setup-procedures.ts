// server.setup, validate, security, publicIp, getServerTime and getDefaultCommand (setupMonitoring and
// getServerMetrics are the monitoring plugin's): what a server needs before workloads run there, and what is true on it.
import { Type, router } from '@berth/core';
import { ServerIdInput, ServerView } from './schemas.ts';
import { OptionalServerIdInput, SecurityResult, ServerTime, SetupResult, ValidateResult } from './setup-schemas.ts';

const server = router('server', 'organization');

export const serverSetupProcedures = [
  server.mutation('setup', {
    permission: 'server.create',
    summary:
      "Sets the server up by ordered, idempotent steps (OS, privilege, Docker engine, Compose, swarm, platform network, directories), or runs its own command instead; each step's command, exit code and stderr are logged in a deployment of the server. A failed step is a 400 naming it",
    input: ServerIdInput,
    output: SetupResult,
    handler: ({ serverId }, ctx) => ctx.cradle.serverOperationRequests.setup(serverId),
  }),
  server.query('validate', {
    permission: 'server.read',
    scope: { host: 'serverId' },
    summary:
      'What is installed on the server (the peer’s fields) and a doctor’s checks, each with a stable code, a sentence and the fix; without serverId (Berth’s addition), of the machine Berth runs on (the instance operators only)',
    input: OptionalServerIdInput,
    output: ValidateResult,
    handler: ({ serverId }, ctx) => ctx.cradle.serverOperationRequests.validate(serverId),
  }),
  server.query('security', {
    permission: 'server.read',
    summary: 'The server’s security audit: effective SSH configuration (sshd -T, included files count), ufw, fail2ban, unattended-upgrades and whether a non-root sudo user exists',
    input: ServerIdInput,
    output: SecurityResult,
    handler: ({ serverId }, ctx) => ctx.cradle.serverOperationRequests.security(serverId),
  }),
  server.query('publicIp', {
    permission: 'member',
    summary:
      'This machine’s address (serverIp when set, else the interface of the default route), or with serverId (Berth’s addition) the server’s, read over SSH; never asks a service on the internet',
    input: OptionalServerIdInput,
    output: Type.String(),
    handler: ({ serverId }, ctx) => ctx.cradle.serverOperationRequests.publicIp(serverId),
  }),
  server.query('getServerTime', {
    permission: 'member',
    summary: 'The time and time zone of the machine Berth runs on',
    input: Type.Object({}),
    output: ServerTime,
    handler: (_input, ctx) => ctx.cradle.serverOperationRequests.serverTime(),
  }),
  server.query('getDefaultCommand', {
    permission: 'server.read',
    summary: 'The setup steps as a script an operator can run by hand on the server (as root)',
    input: ServerIdInput,
    output: Type.String(),
    handler: ({ serverId }, ctx) => ctx.cradle.serverOperationRequests.defaultCommand(serverId),
  }),
];
