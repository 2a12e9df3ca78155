// A run of any workload kind (deploy, redeploy, reload, start, stop, rebuild) as one procedure:
// the run goes on the durable deploy queue; the body is what the peer answers (true, or the
// record), and the queued deployment's id travels in a response header, so Berth's clients can
// follow the run while the peer's clients see the peer's answer.
import { DEPLOYMENT_ID_HEADER, router, type DeploymentService, type EntityManager, type MultipartSpec, type ProcedureContext, type Static, type TSchema } from '@berth/core';
import type { WorkloadRef } from './registry.ts';

export interface RunSpec<I extends TSchema, O extends TSchema> {
  summary: string;
  input: I;
  /** The peer's answer: `schema.Ok()` or the record's view. */
  output: O;
  /** Queues the run; answers the queued deployment's id. */
  queue: (input: Static<I>, ctx: ProcedureContext) => Promise<string>;
  /** The peer's answer, made before the run is queued (the record as it was when the run was asked for). */
  answer: (input: Static<I>, ctx: ProcedureContext) => Promise<Static<O>> | Static<O>;
  /** A run that takes an upload (application.dropDeployment's archive): `queue` finds it in ctx.file. */
  multipart?: MultipartSpec;
  description?: string;
}

/** The mutation `<router>.<name>` that queues a run, answers the peer's body and names the deployment in DEPLOYMENT_ID_HEADER. */
export function runProcedure<I extends TSchema, O extends TSchema>(r: ReturnType<typeof router>, name: string, spec: RunSpec<I, O>) {
  return r.mutation(name, {
    // Every run queues a deployment: the peer's deployment.create.
    permission: 'deployment.create',
    summary: `${spec.summary}; the queued deployment's id is in the ${DEPLOYMENT_ID_HEADER} response header`,
    input: spec.input,
    output: spec.output,
    ...(spec.multipart ? { multipart: spec.multipart } : {}),
    ...(spec.description ? { description: spec.description } : {}),
    headers: { [DEPLOYMENT_ID_HEADER]: 'the deployment this run queued (follow it with deployment.one and deployment.readLogs)' },
    async handler(input, ctx) {
      // The peer answers the record as it read it before the run (its start and stop); so does Berth.
      const answer = await spec.answer(input, ctx);
      ctx.setHeader(DEPLOYMENT_ID_HEADER, await spec.queue(input, ctx));
      return answer;
    },
  });
}

/** Queues a run of the workload on the deploy queue, titled by the caller, else by the kind's `titles` for the action, else the action; answers the queued deployment's id. */
export async function enqueueRun(
  deployments: DeploymentService,
  workload: WorkloadRef,
  action: string,
  titles: Record<string, string>,
  input: { title?: string; description?: string | null },
  em: EntityManager,
): Promise<string> {
  const record = await deployments.enqueue(
    {
      targetType: workload.kind,
      targetId: workload.id,
      organizationId: workload.organizationId,
      serverId: workload.serverId,
      action,
      title: input.title || titles[action] || action,
      description: input.description ?? null,
    },
    em,
  );
  return record.deploymentId;
}
