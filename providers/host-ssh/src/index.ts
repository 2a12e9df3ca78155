// @berth/provider-host-ssh: a remote Docker host over SSH. Its descriptor (contract `host`, id
// `ssh`) comes with the hosts plugin, whose contract (core/src/contracts/host-provider.ts) SshHost
// already has the shape of: engine(), run(argv, options), close().
export { SshHost, type SshHostOptions, type RunOptions, type RunResult } from './ssh-host.ts';
export { HostKeyChangedError, hostKeyFingerprint } from './host-key.ts';
export { commandLine, quoteArg } from './shell-quote.ts';
