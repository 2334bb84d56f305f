/** The Node flags the service runs with when this repository starts it (see service-node-flags.mjs). */
export declare const SERVICE_NODE_FLAGS: readonly string[];
/** The jemalloc library on this machine, or undefined (not Linux, not installed). */
export declare function findJemalloc(): string | undefined;
/**
 * The environment to start the service in: `env` with jemalloc preloaded when the machine has it,
 * unless DECKHAND_MALLOC=system, or LD_PRELOAD already names a jemalloc; `allocator` says which
 * one the service gets.
 */
export declare function serviceEnvironment(env?: NodeJS.ProcessEnv): {
  env: NodeJS.ProcessEnv;
  allocator: string | undefined;
};
