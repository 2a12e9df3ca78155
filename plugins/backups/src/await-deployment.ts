// Manual runs (backup.manualBackup*, volumeBackups.runManually) are deployments like any job,
// and answer once theirs ended, as the peer's answer once the backup is done.
import { badRequest, type DeploymentRecord, type DeploymentService, type EnqueueRequest, type EntityManager, type EventBus } from '@berth/core';

/** Queues the deployment and waits for its end: true when done, else a 400 with its error. */
export async function runToEnd(deployments: DeploymentService, events: EventBus, request: EnqueueRequest, em: EntityManager): Promise<true> {
  const ended = new Map<string, DeploymentRecord>();
  let wake: () => void = () => {};
  // Listening before it is queued: a fast job may end before enqueue answers.
  const off = events.on('deploymentFinished', ({ deployment }) => {
    ended.set(deployment.deploymentId, deployment);
    wake();
  });
  try {
    const queued = await deployments.enqueue(request, em);
    while (!ended.has(queued.deploymentId))
      await new Promise<void>(resolve => {
        wake = resolve;
      });
    const done = ended.get(queued.deploymentId)!;
    if (done.state !== 'done') throw badRequest(done.errorMessage ?? `${request.title} ended ${done.state}`);
    return true;
  } finally {
    off();
  }
}
