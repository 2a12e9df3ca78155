// The plugin's configuration keys: defaults, the environment, the config, and a bad value named.
import t from 'tap';
import { Value } from 'typebox/value';
import { backoffMs, notifyConfig, NotifyConfigSchema } from '../src/settings.ts';

const config = {} as never;

t.test('defaults, env variables and config keys', async t => {
  t.same(notifyConfig(config, {}), { notifyTimeoutSeconds: 10, notifyMaxTries: 5 });
  t.same(notifyConfig(config, { BERTH_NOTIFY_TIMEOUT: '3', BERTH_NOTIFY_MAX_TRIES: '8' }), { notifyTimeoutSeconds: 3, notifyMaxTries: 8 });
  t.same(notifyConfig({ notifyMaxTries: 2 } as never, { BERTH_NOTIFY_MAX_TRIES: '8' }), { notifyTimeoutSeconds: 10, notifyMaxTries: 2 }, 'a config key wins over the environment');
  t.throws(() => notifyConfig(config, { BERTH_NOTIFY_TIMEOUT: 'soon' }), { message: /notifyTimeoutSeconds \(env BERTH_NOTIFY_TIMEOUT\) must be a whole number within 1\.\.300, got "soon"/ });
  t.throws(() => notifyConfig(config, { BERTH_NOTIFY_MAX_TRIES: '0' }), { message: /notifyMaxTries \(env BERTH_NOTIFY_MAX_TRIES\)/ });
  t.same(Object.values(NotifyConfigSchema.properties).map(p => (p as unknown as { env: string }).env), ['BERTH_NOTIFY_TIMEOUT', 'BERTH_NOTIFY_MAX_TRIES'], 'each key names its env variable');
  t.ok(Value.Check(NotifyConfigSchema, { notifyTimeoutSeconds: 10, notifyMaxTries: 5 }));
});

t.test('backoff: 10 s after the first failure, doubling', async t => {
  t.same([1, 2, 3, 4, 5].map(backoffMs), [10_000, 20_000, 40_000, 80_000, 160_000]);
});
