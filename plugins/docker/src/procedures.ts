// docker.* — the peer's router: the containers of this machine or of a server of the organization.
// Organization scope: with serverId, the organization's own server (everything on it is its own);
// without, this machine's engine, where the caller reaches only what Berth made for its
// organization (the berth.organization label), unless it is an instance operator (docs/api.md).
import { router, Type } from '@berth/core';
import {
  AppLabelInput,
  AppNameInput,
  AppNameMatchInput,
  ContainerConfig,
  ContainerInput,
  ContainerRow,
  MatchedContainer,
  NamedContainer,
  ServerInput,
  TaskRow,
  UploadInput,
  UploadResult,
} from './schemas.ts';
import { ContainerStat } from './stats.ts';

const docker = router('docker', 'organization');
const swarm = router('swarm', 'organization');

/** What a container action answers: nothing (null), as the peer. Written as a type list: the document keeps no content for a plain `type: 'null'`. */
const Nothing = Type.Unsafe<null>({ type: ['null'], description: 'nothing (the peer answers no value)' });

/** A container action: the peer answers nothing. */
const action = (name: string, summary: string, act: 'restart' | 'start' | 'stop' | 'kill' | 'remove') =>
  docker.mutation(name, {
    permission: 'docker.read',
    summary,
    input: ContainerInput,
    output: Nothing,
    handler: ({ containerId, serverId }, ctx) => ctx.cradle.dockerRequests[act](containerId, serverId),
  });

export const dockerProcedures = [
  docker.query('getContainers', {
    permission: 'docker.read',
    summary: "Every container of the engine (stopped ones too) as `docker ps -a` shows it: this machine's (the organization's own containers; an instance operator: all) or the server serverId names",
    input: ServerInput,
    output: Type.Array(ContainerRow),
    handler: ({ serverId }, ctx) => ctx.cradle.dockerRequests.containers(serverId),
  }),
  docker.query('getConfig', {
    permission: 'docker.read',
    summary: "The engine's own object for a container (`docker inspect`); one the caller may not reach answers 404, as one that does not exist",
    input: ContainerInput,
    output: ContainerConfig,
    handler: ({ containerId, serverId }, ctx) => ctx.cradle.dockerRequests.config(containerId, serverId),
  }),
  action('restartContainer', 'Restarts a container', 'restart'),
  action('startContainer', 'Starts a container (one already running stays so)', 'start'),
  action('stopContainer', 'Stops a container (one already stopped stays so)', 'stop'),
  action('killContainer', 'Kills a container (SIGKILL; one not running stays so)', 'kill'),
  action('removeContainer', 'Removes a container, running or not (`docker rm -f`)', 'remove'),
  docker.query('getContainersByAppLabel', {
    permission: 'docker.read',
    summary: 'Running containers of the swarm service appName (type swarm), or whose name holds appName (standalone)',
    input: AppLabelInput,
    output: Type.Array(NamedContainer),
    handler: ({ appName, type, serverId }, ctx) => ctx.cradle.dockerRequests.byAppLabel(appName, type, serverId),
  }),
  docker.query('getContainersByAppNameMatch', {
    permission: 'service.read',
    summary: 'The running tasks of the stack appName (appType stack), the containers of the compose project appName (docker-compose), or the containers whose name starts with appName',
    input: AppNameMatchInput,
    output: Type.Array(MatchedContainer),
    handler: ({ appName, appType, serverId }, ctx) => ctx.cradle.dockerRequests.byAppNameMatch(appName, appType, serverId),
  }),
  docker.query('getServiceContainersByAppName', {
    permission: 'docker.read',
    summary: 'The tasks of the swarm service appName, as `docker service ps --no-trunc` lists them',
    input: AppNameInput,
    output: Type.Array(TaskRow),
    handler: ({ appName, serverId }, ctx) => ctx.cradle.dockerRequests.serviceTasks(appName, serverId),
  }),
  docker.query('getStackContainersByAppName', {
    permission: 'docker.read',
    summary: 'The tasks of every service of the stack appName, as `docker stack ps --no-trunc` lists them',
    input: AppNameInput,
    output: Type.Array(TaskRow),
    handler: ({ appName, serverId }, ctx) => ctx.cradle.dockerRequests.stackTasks(appName, serverId),
  }),
  docker.mutation('uploadFileToContainer', {
    permission: 'docker.read',
    summary: 'Puts a file in a container (multipart/form-data: the file in `file`), through the engine’s archive API',
    description:
      'destinationPath is absolute, without . or .. segments (400 naming it otherwise); an existing directory takes the file under its own name, else the file is written at that path, whose directory must exist. A file larger than the config key uploadLimit (100 MB by default) is refused with 413.',
    input: UploadInput,
    output: UploadResult,
    multipart: { fileField: 'file' },
    handler: (input, ctx) => ctx.cradle.dockerRequests.upload(input, ctx.file!),
  }),
  swarm.query('getContainerStats', {
    permission: 'docker.read',
    summary:
      "One reading of each running container (CPU, memory, network and block I/O, in `docker stats --no-stream`'s strings) of this machine (the organization's own containers; an instance operator: all) or of the server serverId names",
    input: ServerInput,
    output: Type.Array(ContainerStat),
    handler: ({ serverId }, ctx) => ctx.cradle.dockerRequests.stats(serverId),
  }),
];
