// Procedures the kernel itself answers.
import Type from 'typebox';
import { router } from './procedure.ts';
import { completeDocument } from './transport/openapi.ts';

const settings = router('settings', 'organization');

export const coreProcedures = [
  settings.query('getOpenApiDocument', {
    permission: 'member',
    summary: 'The OpenAPI 3.1 document of this instance (every enabled operation)',
    input: Type.Object({}),
    output: Type.Object(
      {
        openapi: Type.String(),
        info: Type.Object({ title: Type.String(), version: Type.String() }, { additionalProperties: true }),
        servers: Type.Array(Type.Object({ url: Type.String() })),
        paths: Type.Record(Type.String(), Type.Unknown()),
        components: Type.Record(Type.String(), Type.Unknown()),
      },
      { additionalProperties: true },
    ),
    handler: (_input, ctx) => {
      const app = ctx.cradle.openapi;
      // casts: swagger's loose document type
      return completeDocument(structuredClone(app()) as never, ctx.origin) as never;
    },
  }),
];
