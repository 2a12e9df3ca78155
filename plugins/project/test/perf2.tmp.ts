import { startTestServer, signUpAdmin } from '@berth/core/testing';
const server = await startTestServer({ jobs: false, checkResponses: false, logLevel: 'silent' });
try {
  const { client, organizationId } = await signUpAdmin(server);
  for (let i = 0; i < 200; i++) await client.post('project.create', { name: `bench project ${i}`, description: `project number ${i} of the benchmark` });
  const cradle = server.kernel.container.cradle;
  const { Project } = await import('../src/entities.ts');
  const { Environment } = await import('../../environment/src/entities.ts');
  const time = async (label: string, fn: () => Promise<unknown>) => {
    for (let i = 0; i < 5; i++) await fn();
    const t0 = performance.now();
    for (let i = 0; i < 30; i++) await fn();
    console.log(label, ((performance.now() - t0) / 30).toFixed(2), 'ms');
  };
  const conn = cradle.orm.em.getConnection();
  await time('raw projects', () => conn.execute('select * from projects where organization_id = ? order by created_at desc', [organizationId]));
  await time('em.find projects', () => (cradle.orm.em.fork() as any).find(Project, { organizationId }, { orderBy: { createdAt: 'desc' } }));
  const ids = (await conn.execute('select project_id from projects')).map((r: any) => r.project_id);
  await time('em.find envs $in', () => (cradle.orm.em.fork() as any).find(Environment, { projectId: { $in: ids }, organizationId }));
  await time('raw envs any', () => conn.execute('select * from environments where project_id = any(?) and organization_id = ?', [ids, organizationId]));
  await time('em.find projects disableIdentityMap', () => (cradle.orm.em.fork() as any).find(Project, { organizationId }, { orderBy: { createdAt: 'desc' }, disableIdentityMap: true }));
  await time('qb execute', () => (cradle.orm.em.fork() as any).createQueryBuilder(Project).select('*').where({ organizationId }).orderBy({ createdAt: 'desc' }).execute('all', false));
} finally { await server.destroy(); }
