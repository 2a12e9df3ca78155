// What the engine says of a Swarm service: 200 while it exists, the engine's status (404) once it is gone.
import Docker from 'dockerode';

const docker = new Docker();

export const serviceStatus = (name: string) =>
  docker
    .getService(name)
    .inspect()
    .then(
      () => 200,
      (e: { statusCode?: number }) => e.statusCode,
    );
