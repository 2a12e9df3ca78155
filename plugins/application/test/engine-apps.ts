// What the application suites on the real engine share: a call that fails loudly, and
// applications made for the test whose services are removed from the engine when it ends.
import type { Test } from 'tap';
import Docker from 'dockerode';
import { waitFor, type Client } from '@berth/core/testing';

/** The body served on the port once it matches `expect` (a 200), polled while the service (re)starts. */
export const served = (port: number, expect: RegExp) =>
  waitFor(
    `port ${port} serving ${expect}`,
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      const body = res?.status === 200 ? await res.text() : '';
      return expect.test(body) ? body : undefined;
    },
    { timeout: 30_000, interval: 100 },
  );

/** `call` (a 200 or a thrown error naming the operation) and `newApp` (an application of the environment, its service removed at teardown). */
export function engineApps(t: Test, client: Client, environmentId: string) {
  const docker = new Docker();
  const apps: string[] = [];
  t.teardown(async () => {
    for (const name of apps)
      await docker
        .getService(name)
        .remove()
        .catch(() => undefined);
  });
  const call = async (op: string, input: Record<string, unknown>) => {
    const res = await client.post(op, input);
    if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  /** An application published on `port` (host mode) to `targetPort`, if a port is given. */
  const newApp = async (name: string, port?: number, targetPort = 8080) => {
    const app = (await call('application.create', { name, environmentId })) as { applicationId: string; appName: string };
    apps.push(app.appName);
    // busybox httpd as PID 1 ignores SIGTERM: give old tasks 1 s, not the default 10 s, to stop.
    await call('application.update', { applicationId: app.applicationId, stopGracePeriodSwarm: 1_000_000_000 });
    if (port) await call('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort, publishMode: 'host', protocol: 'tcp' });
    return app;
  };
  return { call, newApp };
}
