/** The Node flags the service runs with when this repository starts it (see service-node-flags.mjs). */
export declare const SERVICE_NODE_FLAGS: readonly string[];
