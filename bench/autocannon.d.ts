// The part of autocannon 8's programmatic API that bench/api.ts uses (the package ships no types).
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    pipelining?: number;
    title?: string;
  }
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    total: number;
  }
  interface Result {
    title?: string;
    url: string;
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram & { totalCount: number };
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }
  function autocannon(options: Options): PromiseLike<Result> & { stop(): void };
  export default autocannon;
  export type { Options, Result };
}
