// The hand-off protocol: small files beside the ready file (default /tmp/shutdown-ready, an
// emptyDir both containers mount) through which `shutdown`, the manager and `status` talk.
//
// ready-file.ts     <ready file>               written by `shutdown` when the drain ends; read by the
//                                              manager (releases Envoy's preStop hook) and `status`.
//                                              One JSON line: how the drain ended (result,
//                                              connections left, elapsed, exit code).
// drain-state.ts    <ready file>.draining      written by `shutdown` when it starts, removed when it
//                                              ends; read by the manager and `status`. One JSON line:
//                                              pid and start time of the draining process, phase and
//                                              timings; a file whose process is gone is an abandoned drain.
// envoy-prestop.ts  <ready file>.envoy-prestop the envoy-prestop record: written by the manager while
//                                              Envoy's own preStop (an authenticated /shutdown/ready)
//                                              waits; read by `shutdown --require-envoy-prestop`.
//                                              One JSON line: when it was recorded.
// drain-result.ts  how a drain ended, as the ready file records it.
// atomic-file.ts    how every file above is written: temporary name, then rename.
// fs-checks.ts      the one writability probe (create and remove a file), for the real run and --dry-run.
// small-file.ts     how every file above is read: bounded in size, never blocking on a FIFO.
export * from './ready-file.js';
export * from './drain-state.js';
export * from './envoy-prestop.js';
export type { DrainResult } from './drain-result.js';
