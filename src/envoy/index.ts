// Envoy's admin API: address parsing, the bounded HTTP client, the calls a drain makes
// (envoy-control.ts) and the parsing of their stats (stats.ts, http-stats.ts; pure); the kernel's
// socket count (socket-count.ts, pure; socket-watch.ts), a drain's hint of a closed connection.
export { createAdminClient } from './admin-client.js';
export { withEnvoy } from './envoy-control.js';
