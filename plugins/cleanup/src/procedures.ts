// settings.clean* and settings.updateDockerCleanup (admins; this machine: its operators). A cleanup with
// dryRun answers its report; otherwise it runs as a deployment of the host (its id in the
// x-berth-deployment-id header, the report its log) and answers the peer's body once done —
// cleanAll at once, the run going on in the background.
import { DEPLOYMENT_ID_HEADER, Type, router, type ProcedureContext, type TSchema } from '@berth/core';
import { CleanupInput, DockerCleanupInput, orReport, Scheduled } from './schemas.ts';
import type { Operation } from './service.ts';

const settings = router('settings', { host: 'serverId' });

const SUMMARIES: Record<Operation, string> = {
  cleanUnusedImages: 'Remove the images no container and no service uses',
  cleanUnusedVolumes: 'Remove the volumes no container mounts',
  cleanStoppedContainers: 'Remove the stopped containers',
  cleanDockerBuilder: 'Remove the build cache not in use',
  cleanDockerPrune: 'Remove the stopped containers, then the unused images, then the build cache',
  cleanAll: 'Remove the stopped containers, the unused images and the build cache (volumes stay); answers at once, the cleanup going on in the background',
};

function cleanup<O extends TSchema>(name: Operation, peer: O, answer: unknown) {
  return settings.mutation(name, {
    access: 'admin',
    permission: 'organization.update',
    summary: `${SUMMARIES[name]}, on the server serverId or on Berth's own machine; never what a live record or another organization owns. dryRun: answers what it would remove. The deployment of the run is in the ${DEPLOYMENT_ID_HEADER} response header, its log the report`,
    input: CleanupInput,
    output: orReport(peer),
    headers: { [DEPLOYMENT_ID_HEADER]: 'the deployment of the cleanup (follow it with deployment.one and deployment.readLogs)' },
    handler: async (input, ctx: ProcedureContext) => {
      const { cleanup, em } = ctx.cradle;
      const serverId = await cleanup.authorize(input.serverId, ctx.principal);
      // cast: the output schema is a union of the dry run's report and the peer's answer.
      if (input.dryRun) return cleanup.plan(name, serverId, ctx.principal.organizationId, em) as never;
      const deploymentId = await cleanup.queue(name, serverId, ctx.principal.organizationId, em);
      ctx.setHeader(DEPLOYMENT_ID_HEADER, deploymentId);
      if (name !== 'cleanAll') await cleanup.finished(deploymentId, serverId);
      return answer as never; // cast: as above
    },
  });
}

export const cleanupProcedures = [
  cleanup('cleanUnusedImages', Type.Boolean(), true),
  cleanup('cleanUnusedVolumes', Type.Boolean(), true),
  cleanup('cleanStoppedContainers', Type.Boolean(), true),
  cleanup('cleanDockerBuilder', Type.Null(), null),
  cleanup('cleanDockerPrune', Type.Boolean(), true),
  cleanup('cleanAll', Scheduled, { status: 'scheduled', message: 'Docker cleanup has been initiated in the background' }),
  settings.mutation('updateDockerCleanup', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Turn the daily cleanup (at cleanupCron) of the server serverId, or of Berth's own machine (its operators), on or off",
    input: DockerCleanupInput,
    output: Type.Boolean(),
    handler: async (input, ctx) => {
      const { cleanup, em } = ctx.cradle;
      const serverId = await cleanup.authorize(input.serverId, ctx.principal);
      await cleanup.setDaily(input.enableDockerCleanup, serverId, ctx.principal.organizationId, em);
      return true;
    },
  }),
];
