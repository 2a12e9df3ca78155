// What server.setup, validate, security, publicIp, getServerTime, getDefaultCommand, setupMonitoring
// and getServerMetrics take and answer: the peer's fields (its router's declared types), and
// Berth's additions (setup's steps, validate's checks) said so in their descriptions.
import { Type, schema } from '@berth/core';

const { NonEmpty, Nullable } = schema;
const Id = () => NonEmpty({ maxLength: 255 });

const StepOutcome = Type.Object({
  step: Type.String({ description: 'os, privilege, docker, compose, swarm, network, directories, or command (the server’s own script)' }),
  command: Type.String(),
  exitCode: Nullable(Type.Integer()),
  result: Type.Union([Type.Literal('unchanged'), Type.Literal('changed'), Type.Literal('failed')]),
  stderr: Type.String({ description: 'the last lines of its stderr' }),
});

/** server.setup (Berth's answer: the peer answers nothing). A failed step is a 400 naming it. */
export const SetupResult = Type.Object({ deploymentId: Type.String({ description: 'the deployment whose log holds every step' }), status: Type.Literal('done'), steps: Type.Array(StepOutcome) });

const Program = () => Type.Object({ enabled: Type.Boolean(), version: Nullable(Type.String({ description: 'null when the program is absent' })) });

export const Check = Type.Object({
  code: Type.String({
    description:
      'ssh.dns, ssh.route, ssh.port, ssh.auth, ssh.hostKeyChanged, sudo.none, docker.missing, docker.snap, docker.version, swarm.inactive, swarm.loopback, port.busy.<n>, disk.low, clock.skew',
  }),
  ok: Type.Boolean(),
  message: Type.String(),
  fix: Type.String({ description: "what to do ('' when ok)" }),
});

export const ValidateResult = Type.Object({
  docker: Program(),
  rclone: Program(),
  nixpacks: Program(),
  buildpacks: Program(),
  railpack: Program(),
  isDokployNetworkInstalled: Type.Boolean({ description: 'the platform network exists on the server' }),
  isSwarmInstalled: Type.Boolean(),
  isMainDirectoryInstalled: Type.Boolean(),
  privilegeMode: Type.String({ description: 'root, sudo (passwordless) or none' }),
  dockerGroupMember: Type.Boolean(),
  checks: Type.Array(Check, { description: "Berth's doctor: one entry per check, each with its stable code, a sentence and the fix" }),
});

export const SecurityResult = Type.Object({
  ufw: Type.Object({ installed: Type.Boolean(), active: Type.Boolean(), defaultIncoming: Type.String() }),
  ssh: Type.Object({ enabled: Type.Boolean(), keyAuth: Type.Boolean(), permitRootLogin: Type.String(), passwordAuth: Type.String(), usePam: Type.String() }),
  nonRootUser: Type.Object({ hasValidSudoUser: Type.Boolean() }),
  unattendedUpgrades: Type.Object({ installed: Type.Boolean(), active: Type.Boolean(), updateEnabled: Type.Number(), upgradeEnabled: Type.Number() }),
  fail2ban: Type.Object({ installed: Type.Boolean(), enabled: Type.Boolean(), active: Type.Boolean(), sshEnabled: Type.String(), sshMode: Type.String() }),
});

export const OptionalServerIdInput = Type.Object({ serverId: Type.Optional(Id()) });
export const ServerTime = Type.Object({ time: Type.String({ format: 'date-time' }), timezone: Type.String() });
