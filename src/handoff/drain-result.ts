// How a drain ended. `shutdown` writes it into the ready file; the manager and `status` read it back.

export type DrainResult = 'drained' | 'timeout' | 'envoy-unreachable';
