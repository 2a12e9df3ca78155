// @berth/provider-host-ssh: a remote Docker host over SSH. Its descriptor (contract `host`, id
// `ssh`) comes with the hosts plugin; HostConnection (engine(), run(argv, options), close()) is the
// draft of that plugin's contract, core/src/contracts/host-provider.ts.
export { SshHost, type SshHostOptions } from './ssh-host.ts';
export type { HostConnection, RunOptions, RunResult } from './host-connection.ts';
export { HostKeyChangedError, hostKeyFingerprint } from './host-key.ts';
export { commandLine, quoteArg } from './shell-quote.ts';
