// What the cluster plugin reads of a swarm's engines (the shapes of their answers), and what holds
// whoever asks: the placeholder that stands for a join token, a join's error scrubbed of its
// tokens, this machine's swarm being the instance owner's alone to change. swarm.* and cluster.*
// are requests.ts.
import { isIP } from 'node:net';
import { BerthError } from '@berth/core';

/** What replaces a join token in every answer. */
export const TOKEN_PLACEHOLDER = '<use cluster.joinServer>';
export const SWARM_PORT = 2377;

export interface SwarmInfo {
  Swarm?: {
    NodeID?: string;
    NodeAddr?: string;
    LocalNodeState?: string;
    ControlAvailable?: boolean;
    Nodes?: number;
    Cluster?: { ID?: string; TLSInfo?: { TrustRoot?: string } };
    RemoteManagers?: { NodeID: string; Addr: string }[] | null;
  };
}

/** What a listing's filter reads of a node, whichever way the node is typed. */
export interface ListedNode {
  ID: string;
  Spec: object;
}

export interface EngineNode {
  ID: string;
  Version: { Index: number };
  Spec: { Role?: string; Availability?: string; Labels?: Record<string, string>; Name?: string };
  Description?: { Hostname?: string; Engine?: { EngineVersion?: string }; TLSInfo?: { TrustRoot?: string } };
  Status?: { State?: string; Addr?: string };
  ManagerStatus?: { Leader?: boolean; Reachability?: string };
}

export interface EngineTask {
  ID: string;
  ServiceID: string;
  NodeID?: string;
  DesiredState?: string;
  Status?: { State?: string };
  CreatedAt?: string;
}

export const capital = (s: string | undefined) => (s ? s[0]!.toUpperCase() + s.slice(1) : '');
export const loopback = (addr: string) => addr === 'localhost' || addr === '::1' || (isIP(addr) === 4 && addr.startsWith('127.'));
export const sleep = (ms: number) => new Promise<void>(r => setTimeout(r, ms));

/**
 * This machine's swarm is every organization's: a 403 naming `field` unless the caller is the
 * instance owner (the first admin), with why.
 */
export function ownersAlone(field: string, why: string): BerthError {
  const message = `${why}: only the instance owner (the first admin) may do that on this machine's swarm, which every organization shares`;
  return new BerthError('FORBIDDEN', `${field}: ${message}`, [{ path: [field], message }]);
}

/** A join's error with every token it might carry replaced. */
export function scrubbed(e: unknown, tokens: string[]): unknown {
  const clean = (s: unknown) => (typeof s === 'string' ? tokens.reduce((out, token) => (token ? out.split(token).join(TOKEN_PLACEHOLDER) : out), s) : s);
  const err = e as { message?: string; reason?: string; json?: { message?: string } };
  if (err && typeof err === 'object') {
    if (err.message) err.message = clean(err.message) as string;
    if (err.reason) err.reason = clean(err.reason) as string;
    if (err.json?.message) err.json = { ...err.json, message: clean(err.json.message) as string };
  }
  return e;
}

export interface Service {
  ID: string;
  Spec: { Name: string; Mode?: { Global?: object; Replicated?: { Replicas?: number } }; TaskTemplate?: { ContainerSpec?: { Image?: string } } };
  Endpoint?: { Ports?: { PublishedPort?: number; TargetPort?: number; Protocol?: string; PublishMode?: string }[] };
  ServiceStatus?: { RunningTasks?: number; DesiredTasks?: number };
}
