// The cleanup operations' input and answers (TypeBox).
import { Type, type Static, type TSchema } from '@berth/core';
import { STEPS } from './plan.ts';

const Bytes = () => Type.Integer({ minimum: 0 });

export const CleanupInput = Type.Object({
  serverId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "The server to clean; absent: Berth's own machine (its operators only)" })),
  dryRun: Type.Optional(Type.Boolean({ description: 'Answer what the cleanup would remove, per step, and remove nothing' })),
});
export type CleanupInput = Static<typeof CleanupInput>;

export const DockerCleanupInput = Type.Object({ enableDockerCleanup: Type.Boolean(), serverId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) });

export const CleanupReport = Type.Object(
  {
    serverId: Type.Union([Type.String(), Type.Null()]),
    steps: Type.Array(Type.Object({ step: Type.Enum([...STEPS]), objects: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), bytes: Bytes() })), bytes: Bytes() })),
    bytes: Bytes(),
    diskUsage: Type.Object(
      { images: Bytes(), containers: Bytes(), volumes: Bytes(), builder: Bytes() },
      { description: 'docker system df now: bytes of the layers, the containers, the volumes, the build cache' },
    ),
  },
  { description: 'The dry run: per step what would be removed and the bytes it holds' },
);

/** The peer's answer, or the report when dryRun. */
export const orReport = <T extends TSchema>(peer: T) => Type.Union([peer, CleanupReport]);

export const Scheduled = Type.Object({ status: Type.String(), message: Type.String() });
