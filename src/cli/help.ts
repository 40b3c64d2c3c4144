// Long help texts, kept out of the CLI wiring so both read easily.

/** What a bare `envoy-shutdown-manager` prints: enough to find the way, not the whole manual. */
export const SHORT_USAGE = `usage: envoy-shutdown-manager <command> [options]
  shutdown          drain Envoy, then write the ready file (the sidecar's preStop hook)
  shutdown-manager  hold Envoy's preStop hook until the drain has ended (the sidecar)
  status, install   see --help
Run envoy-shutdown-manager --help for every command, or <command> --help for its options.
`;

export const SHUTDOWN_HELP = {
  description: "Drain Envoy, then release its preStop hook. Runs as the sidecar's exec preStop hook, or by hand through kubectl exec.",
  after: `
Sequence:
  1. POST /healthcheck/fail        (with --health-check-failure-delay above 0: after step 2 and the delay)
  2. POST /drain_listeners?graceful&skip_exit
  3. read the connection count until --min-drain-duration has passed and the count is at or
     under --exit-at-connections, or until --drain-timeout ends
  4. write --ready-file: the manager's GET /shutdown/ready then answers, and Envoy gets SIGTERM

Connection sources (--connections):
  total      server.total_connections. Envoy recomputes it only at each stats flush (every 5 s
             by default), and it counts every data-plane connection, a Prometheus scraper's
             keep-alive connection to the stats listener included: a drain waiting for 0 can run
             to its timeout because of it.
  listeners  the sum of the live listener.<name>.downstream_cx_active gauges, updated as
             connections open and close, without the admin listener and per-worker copies, minus
             each --ignore-listener (an exact stats name: your stats and readiness listeners).
             Faster and safer: recommended.

Timeouts must nest: --min-drain-duration <= --drain-timeout < the manager's --ready-timeout
< the pod's terminationGracePeriodSeconds.

Exit codes:
  0    drained
  1    no drain could start: the calls that start it were refused, failed or not answered for
       3 s (or one --admin-timeout, if longer; a 4xx is not retried); or Envoy exited during
       the drain: its admin API refused 3 times in a row (about 0.5 s). The ready file is still
       written. Any answer from Envoy (a 5xx, a body that is not the stats, one cut short) or a
       read that times out means Envoy is alive: the count is unknown, and the drain goes on (exit 3).
  2    usage error: bad flag, value or environment variable, or an unusable ready-file
       directory. Nothing was sent to Envoy.
  3    the drain timeout ended with connections left, or with their count unknown (ready file
       written); each admin call is bounded by --admin-timeout and 2 MiB
  4    the ready file could not be written
  5    unexpected error (e.g. the ready-file directory became unwritable mid-drain); the
       message says what
  130  interrupted by SIGINT/SIGTERM before the drain ended (no ready file written)
  143  a second SIGTERM stopped it at once (a second SIGINT: 130)

--dry-run prints the effective configuration (with where each value came from), the steps a
drain would take and the current counts, and changes nothing; exit 0, 1 when Envoy's admin API
cannot be reached, 3 when Envoy answers but its connection count cannot be read.

Every option also reads the environment variable shown as "env:"; flags win. Logs are JSON lines
on stdout; run as a hook inside Kubernetes they are also copied to /proc/1/fd/1, so that
kubectl logs shows them.`,
} as const;

export const MANAGER_HELP = {
  description: "Serve the endpoint Envoy's httpGet preStop hook calls, and hold it until the drain has ended.",
  after: `
Endpoints:
  GET /shutdown/ready  waits until the ready file appears, then answers 200 with the drain
                       report; after --ready-timeout answers 500 (kubelet records a failed
                       hook). It never starts or changes anything: it only waits.
  GET /shutdown/drain  only with --drain-endpoint (native sidecar), with the hook token: runs
                       the drain in this process and answers when it ends (200 drained, 500
                       timeout or Envoy unreachable); without the token 403
  GET /healthz         200 while the process runs (use it for readiness; see the README
                       before adding a liveness probe)
  GET /metrics         Prometheus text: handshakes, waiters, releases, drains by result and
                       the last drain's numbers. Read-only.
  Other paths answer 404, other methods 405. Past --max-waiters, /shutdown/ready answers 503.

At start a ready file left by an earlier run is removed, so it cannot release Envoy early.
On SIGTERM or SIGINT the server stops accepting connections and answers every waiter at once:
200 with the drain report when the ready file is there, else 500 (kubelet sends the sidecar
SIGTERM only after its own preStop hook, the drain, returned: holding Envoy longer would only
burn the grace period). Drains in progress (/shutdown/drain) are still answered. Then exit 0.

Timeouts must nest: shutdown's --drain-timeout < --ready-timeout < the pod's
terminationGracePeriodSeconds. When ENVOY_SHUTDOWN_DRAIN_TIMEOUT is set, a --ready-timeout that
is not longer is refused at start.

Exit codes:
  0    stopped after a signal, every waiter answered
  2    usage error: bad flag or value, port in use, unusable ready-file directory
  5    unexpected error; the message says what
  130  a second SIGINT stopped it at once (143: a second SIGTERM)`,
} as const;

export const STATUS_HELP = {
  description: 'Report where Envoy and its drain stand: for an operator, by hand through kubectl exec.',
  after: `
Reports Envoy's state (LIVE, DRAINING once the health check failed, PRE_INITIALIZING,
INITIALIZING), active connections counted as shutdown counts them (per listener with
--connections listeners), new connections accepted over the last --interval, whether a drain is
in progress in this container (started when and by whom, time left) and how the last drain ended
(from the ready file). Reads only.

Exit codes:
  0  report printed (with --watch: stopped by SIGINT/SIGTERM)
  1  Envoy's admin API unreachable (the rest of the report is still printed)
  2  usage error
  3  Envoy answered, but its connection count cannot be read (the report says why, and the
     rest of it is still printed)
  5  unexpected error; the message says what`,
} as const;

export const INSTALL_HELP = {
  description:
    "Lay out a self-contained copy of this executable in <dir>: the executable, its dynamic loader and exactly the shared libraries it links (read from its ELF headers). Run through that loader, the copy needs nothing from the container it runs in: no shell, no libc, no /proc. Sidecar-less mode uses it to run the drain in Envoy's own preStop hook.",
  after: `
Layout:
  <dir>/current -> v-<version>-<hash>        switched atomically once the copy is proven to run
  <dir>/v-<version>-<hash>/envoy-shutdown-manager
  <dir>/v-<version>-<hash>/lib/ld-linux-x86-64.so.2, libc.so.6, libstdc++.so.6, …

Files are readable and runnable by any UID. Re-running is safe: an existing good copy is kept,
older ones and leftovers of an interrupted run are removed. After copying, the copy is run once
(--version, through its loader, with an empty environment). The exec command a preStop hook must
use is printed last, as a JSON array.

Exit codes:
  0  installed and verified
  1  the copy failed (no space left, …) or does not run; nothing half-copied is left behind
  2  usage error: <dir> missing or not writable, or not run from the single executable
  5  unexpected error; the message says what`,
} as const;
