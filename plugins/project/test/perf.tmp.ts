import { startTestServer, signUpAdmin } from '@berth/core/testing';
import autocannon from 'autocannon';
const server = await startTestServer({ jobs: false, checkResponses: false, logLevel: 'silent' });
try {
  const { client, apiKey, organizationId } = await signUpAdmin(server);
  for (let i = 0; i < 200; i++) await client.post('project.create', { name: `bench project ${i}`, description: `project number ${i} of the benchmark` });
  const cradle = server.kernel.container.cradle;
  // direct service timings
  const t0 = performance.now();
  for (let i = 0; i < 50; i++) {
    const em = cradle.orm.em.fork() as any;
    await (cradle.projects as any).all(organizationId, em, cradle.environments);
  }
  console.log('service all avg ms', ((performance.now() - t0) / 50).toFixed(2));
  const body = await fetch(`${server.url}/api/project.all`, { headers: { 'x-api-key': apiKey } }).then(r => r.text());
  console.log('body KB', (body.length / 1024).toFixed(1));
  for (const path of ['project.all', `project.one?projectId=${JSON.parse(body)[0].projectId}`]) {
    const r = await autocannon({ url: `${server.url}/api/${path}`, connections: 10, duration: 3, headers: { 'x-api-key': apiKey } });
    console.log(path, 'p50', r.latency.p50, 'p99', r.latency.p99, 'req/s', r.requests.average, 'non2xx', r.non2xx);
  }
} finally { await server.destroy(); }
