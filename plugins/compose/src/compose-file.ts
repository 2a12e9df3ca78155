// The compose-file transforms this plugin uses (parse, suffix, isolate, domains, the report of
// ignored keys, custom commands, templates) come from one module: the pure functions of
// ./file/ (part B of issue 15). Until that module is merged, a minimal stand-in serves them.
export * from './file-shim.ts';
