import { startTestServer, signUpAdmin } from '@berth/core/testing';
const server = await startTestServer();
try {
  const { client } = await signUpAdmin(server);
  const c = await client.post('project.create', { name: 'Shop', description: 'web shop' });
  console.log(c.status, JSON.stringify(c.body));
  const all = await client.get('project.all');
  console.log(all.status, JSON.stringify(all.body));
  const d = await client.post('project.duplicate', { sourceEnvironmentId: c.body.environment.environmentId, name: 'Shop 2' });
  console.log(d.status, JSON.stringify(d.body));
  const d2 = await client.post('project.duplicate', { sourceEnvironmentId: c.body.environment.environmentId, name: 'staging', duplicateInSameProject: true });
  console.log(d2.status, JSON.stringify(d2.body));
} finally { await server.destroy(); }
