// What docker.* takes and answers: the peer's inputs (its patterns, made stricter where a name reaches
// the engine's API) and the rows its Docker CLI calls answer, field for field.
import { Type, type Static } from '@berth/core';

/**
 * A container's id (or a prefix of it) or name, as the engine names them: a letter or digit first,
 * so no path segment such as `..` ever reaches the engine's API.
 */
export const CONTAINER_REF = '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$';
const ContainerId = () => Type.String({ minLength: 1, maxLength: 128, pattern: CONTAINER_REF, description: "a container's id (or the start of it) or name" });
const AppName = () => Type.String({ minLength: 1, maxLength: 128, pattern: CONTAINER_REF, description: "a workload's appName (its service, stack or compose project name)" });
const ServerId = () => Type.Optional(Type.String({ maxLength: 255, description: "a server of the organization; absent or empty: this machine's engine" }));

export const ServerInput = Type.Object({ serverId: ServerId() });
export const ContainerInput = Type.Object({ containerId: ContainerId(), serverId: ServerId() });
export const AppNameInput = Type.Object({ appName: AppName(), serverId: ServerId() });
export const AppLabelInput = Type.Object({
  appName: AppName(),
  serverId: ServerId(),
  type: Type.Union([Type.Literal('standalone'), Type.Literal('swarm')], { description: 'swarm: the containers of the service appName; standalone: those whose name holds appName' }),
});
export const AppNameMatchInput = Type.Object({
  appType: Type.Optional(
    Type.Union([Type.Literal('stack'), Type.Literal('docker-compose')], {
      description: 'stack: the running tasks of the stack appName; docker-compose: the containers of the compose project appName; absent: containers whose name starts with appName',
    }),
  ),
  appName: AppName(),
  serverId: ServerId(),
});
/** The upload's fields (the file comes beside them, in the form's `file` field). */
export const UploadInput = Type.Object({
  containerId: ContainerId(),
  destinationPath: Type.String({
    minLength: 1,
    maxLength: 4096,
    pattern: '^[a-zA-Z0-9.\\-_/]+$',
    description: 'where the file goes in the container: an absolute path without . or .. segments; an existing directory takes the file under its own name',
  }),
  serverId: ServerId(),
});
export type UploadInput = Static<typeof UploadInput>;

export const ContainerRow = Type.Object({
  containerId: Type.String({ description: 'the short id (12 characters)' }),
  name: Type.String(),
  image: Type.String(),
  ports: Type.String({ description: 'as `docker ps` prints them, e.g. 0.0.0.0:8080->80/tcp' }),
  state: Type.String({ description: 'created, running, exited…' }),
  status: Type.String({ description: 'e.g. "Up 2 hours"' }),
  serverId: Type.Optional(Type.String({ description: 'the serverId asked for' })),
});
export type ContainerRow = Static<typeof ContainerRow>;

export const NamedContainer = Type.Object({ containerId: Type.String(), name: Type.String(), state: Type.String() });
export type NamedContainer = Static<typeof NamedContainer>;

export const MatchedContainer = Type.Object({
  containerId: Type.String({ description: "the short id; a stack's task: its container's short id, empty while it has none" }),
  name: Type.String({ description: "the container's name; a stack's task: <service>.<slot>.<task id>" }),
  state: Type.String(),
  status: Type.String(),
  node: Type.Optional(Type.String({ description: "a stack's task: the node it is on" })),
});
export type MatchedContainer = Static<typeof MatchedContainer>;

export const TaskRow = Type.Object({
  containerId: Type.String({ description: "the task's id (as `docker service ps --no-trunc` prints it)" }),
  name: Type.String({ description: '<service>.<slot>' }),
  state: Type.String({ description: 'the desired state, lower case' }),
  node: Type.String({ description: "the node's host name" }),
  currentState: Type.String({ description: 'e.g. "Running 5 minutes ago"' }),
  error: Type.String(),
});
export type TaskRow = Static<typeof TaskRow>;

const EngineObject = (description: string) => Type.Object({}, { additionalProperties: true, description });
/** `docker inspect` of a container: the engine's own object (its fields are the engine's; the main ones declared). */
export const ContainerConfig = Type.Object(
  {
    Id: Type.String(),
    Created: Type.String(),
    Name: Type.String(),
    Image: Type.String(),
    State: EngineObject('Status, Running, Pid, ExitCode, StartedAt…'),
    Config: EngineObject('Image, Env, Cmd, Labels…'),
    HostConfig: EngineObject('RestartPolicy, Binds, PortBindings…'),
    NetworkSettings: EngineObject('Networks, Ports…'),
    Mounts: Type.Array(EngineObject('a mount')),
  },
  { additionalProperties: true },
);
export type ContainerConfig = Static<typeof ContainerConfig>;

export const UploadResult = Type.Object({ success: Type.Boolean(), message: Type.String() });
