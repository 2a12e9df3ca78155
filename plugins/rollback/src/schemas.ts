// What rollback.* takes and answers: the peer's rollbackId in, a kept release (the peer's rollback
// row) out, its fullContext without env values or credentials.
import { Type, schema, type Static } from '@berth/core';

const { NonEmpty } = schema;

export const RollbackIdInput = Type.Object({ rollbackId: NonEmpty({ maxLength: 64, description: 'a kept release of an application of the organization (deployment.allByType answers them)' }) });

export const RollbackView = Type.Object(
  {
    rollbackId: Type.String(),
    deploymentId: Type.String({ description: 'the deployment that rolled the release out' }),
    version: Type.Integer({ description: "the release's number: rising, never given twice (one sequence for every application, as the peer's)" }),
    image: Type.String({ description: 'what a rollback rolls out: the rollback tag on the engine, or the rollback registry reference' }),
    createdAt: Type.String({ format: 'date-time' }),
    fullContext: Type.Object(
      {
        appName: Type.String(),
        image: Type.String({ description: 'the image reference the release ran' }),
        envKeys: Type.Array(Type.String(), { description: "the names of the release's environment variables (their values are never answered)" }),
        command: Type.Union([Type.String(), Type.Null()]),
        replicas: Type.Integer(),
        ports: Type.Array(Type.Object({ targetPort: Type.Integer(), publishedPort: Type.Integer(), protocol: Type.String(), publishMode: Type.String() })),
        mounts: Type.Array(Type.Object({ type: Type.String(), source: Type.String(), target: Type.String() })),
      },
      { description: 'what the release ran, without secrets (the peer answers its whole application row here)' },
    ),
  },
  { description: 'a release kept to roll back to' },
);
export type RollbackView = Static<typeof RollbackView>;
