// notification.receiveNotification: the peer's monitoring agent reports a threshold with the
// token of the server it runs on, and no API key. The token is compared in constant time with
// every server's metricsConfig.server.token (through the servers plugin's `metricsTokens`); a
// match becomes a serverThreshold event of that server's organization. No match is 401 and
// nothing is stored. Until a servers plugin registers `metricsTokens`, no token can match.
import { createHash, timingSafeEqual } from 'node:crypto';
import { optionalService, unauthorized, type Cradle, type EntityManager, type Static } from '@berth/core';
import type { ReceiveNotificationInput } from './schemas.ts';

/** A server's monitoring token, as the servers plugin answers it. */
export interface MetricsToken {
  serverId: string;
  organizationId: string;
  serverName: string;
  token: string;
}

/** What the servers plugin registers as `metricsTokens`. */
export interface MetricsTokenDirectory {
  /** Every server's metricsConfig.server.token (servers without one are left out). */
  all(em: EntityManager): Promise<MetricsToken[]>;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The server whose token this is; every candidate is compared, in constant time, so timing says nothing. */
export function matchToken(given: string, candidates: MetricsToken[]): MetricsToken | null {
  const g = digest(given);
  let found: MetricsToken | null = null;
  for (const c of candidates) {
    if (c.token && timingSafeEqual(g, digest(c.token)) && !found) found = c;
  }
  return found;
}

export async function receiveNotification(input: Static<typeof ReceiveNotificationInput>, cradle: Cradle): Promise<boolean> {
  const directory = optionalService(cradle, 'metricsTokens');
  const server = matchToken(input.Token, directory ? await directory.all(cradle.em) : []);
  if (!server) throw unauthorized("The token is not a server's monitoring token");
  // Stored before the agent gets its answer: an answered alert is never lost.
  await cradle.events.emitDurable(
    'serverThreshold',
    {
      organizationId: server.organizationId,
      serverId: server.serverId,
      serverName: server.serverName,
      type: input.Type,
      value: input.Value,
      threshold: input.Threshold,
      message: input.Message,
      at: Number.isNaN(Date.parse(input.Timestamp)) ? new Date().toISOString() : new Date(input.Timestamp).toISOString(),
    },
    cradle.em,
  );
  return true;
}

declare module '@berth/core' {
  interface Cradle {
    /** Registered by the servers plugin: every server's monitoring token. */
    metricsTokens: MetricsTokenDirectory;
  }
}
