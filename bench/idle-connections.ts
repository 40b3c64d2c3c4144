// 8. Idle connections at Envoy's exit: what `--ignore-idle-connections` risks. An idle pooled
// connection (opened before the drain, one request answered) sends one more request a few
// milliseconds before or after Envoy gets SIGTERM; the outcome shows the window in which such a
// request is lost. Real Envoy, draining (`drain_listeners?graceful&skip_exit`), as when the drain
// has ended and kubelet stops it.
import { Agent, request } from 'node:http';
import http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { HEALTHY_BOOTSTRAP } from '../test/support/real-envoy/healthy-envoy.js';
import { get, type RealEnvoy, startRealEnvoy } from '../test/support/real-envoy/process.js';
import { progress, type Scenario, sleep, table } from './support/harness.js';

const OFFSETS_MS = [-50, -20, -10, -5, -2, 0, 2, 5, 20];
const RUNS = 3;
type Protocol = 'HTTP/1.1' | 'HTTP/2';

interface IdleClient {
  /** Sends one request on the pooled connection; resolves with undefined (answered) or why it failed. */
  send(): Promise<string | undefined>;
  close(): void;
}

async function idleHttp1(port: number): Promise<IdleClient> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (): Promise<string | undefined> =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/', agent, timeout: 5_000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? undefined : `status ${res.statusCode}`));
        res.on('error', (error) => resolve(error.message));
      });
      req.on('timeout', () => req.destroy(new Error('no answer in 5 s')));
      req.on('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? error.message));
      req.end();
    });
  const first = await send();
  if (first !== undefined) throw new Error(`the first request failed: ${first}`);
  return { send, close: () => agent.destroy() };
}

async function idleHttp2(port: number): Promise<IdleClient> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  const send = (): Promise<string | undefined> =>
    new Promise((resolve) => {
      if (session.closed || session.destroyed) {
        resolve('session already closed');
        return;
      }
      const stream = session.request({ ':path': '/' });
      let status = 0;
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.resume();
      stream.on('end', () => resolve(status === 200 ? undefined : `status ${status}`));
      stream.on('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? error.message));
      stream.on('close', () => resolve(stream.rstCode === 0 ? undefined : `stream reset ${stream.rstCode}`));
    });
  const first = await send();
  if (first !== undefined) throw new Error(`the first request failed: ${first}`);
  return { send, close: () => session.destroy() };
}

async function once(protocol: Protocol, offsetMs: number): Promise<string | undefined> {
  const envoy: RealEnvoy = await startRealEnvoy({ bootstrap: HEALTHY_BOOTSTRAP, args: ['--drain-strategy', 'immediate', '--drain-time-s', '60'] });
  try {
    const port = envoy.ports.ingress as number;
    const client = protocol === 'HTTP/1.1' ? await idleHttp1(port) : await idleHttp2(port);
    const drained = await get(envoy.adminAddress, '/drain_listeners?graceful&skip_exit', 'POST');
    if (drained.status !== 200) throw new Error(`drain_listeners answered ${drained.status}`);
    await sleep(100); // the connection sits idle in its pool while the drain runs
    const sigtermAt = performance.now() + 50 + Math.max(0, -offsetMs);
    const sent = (async () => {
      await sleep(sigtermAt + offsetMs - performance.now());
      return client.send();
    })();
    await sleep(sigtermAt - performance.now());
    envoy.child.kill('SIGTERM');
    const outcome = await sent;
    client.close();
    return outcome;
  } finally {
    await envoy.stop();
  }
}

async function run(): Promise<string> {
  const rows: string[][] = [];
  for (const protocol of ['HTTP/1.1', 'HTTP/2'] as const) {
    for (const offset of OFFSETS_MS) {
      const outcomes: string[] = [];
      for (let n = 0; n < RUNS; n += 1) outcomes.push((await once(protocol, offset)) ?? 'answered');
      progress('idle-connections', `${protocol} at ${offset} ms: ${outcomes.join(', ')}`);
      const answered = outcomes.filter((o) => o === 'answered').length;
      const failures = [...new Set(outcomes.filter((o) => o !== 'answered'))];
      rows.push([protocol, `${offset > 0 ? '+' : ''}${offset} ms`, `${answered} of ${RUNS}`, failures.join(', ') || '—']);
    }
  }
  return [
    `A real Envoy ${await envoyVersion()} (one HTTP listener answering 200 itself, \`--drain-strategy immediate\`) holds one idle pooled client connection, opened and used once before \`POST /drain_listeners?graceful&skip_exit\`. 100 ms into the drain the client sends one more request on that connection at the offset shown from the moment Envoy gets SIGTERM (negative: before). This is the request \`--ignore-idle-connections\` can lose: one an idle client sends just as the pod's Envoy is stopped after the drain. ${RUNS} runs per offset, each on a fresh Envoy.`,
    '',
    table(['protocol', 'request sent vs SIGTERM', 'answered', 'how the others failed'], rows),
    '',
    "Up to the SIGTERM the draining Envoy answers it (HTTP/1.1 with `Connection: close`). After it, Envoy closes its connections and listeners within tens of milliseconds: a request written on the idle connection as it closes is reset (`ECONNRESET`), the one lost request; a client that noticed the close first opens a new connection, which this exiting Envoy refuses (`ECONNREFUSED`) or still answers, and which behind a load balancer goes to another pod. An HTTP/2 client that saw the session close sends nothing on it. In a pod the SIGTERM follows the drain's end by the release (section 1) plus kubelet's reaction, and after the quiet period no request arrived for seconds: the exposure is a request an idle client writes in the few milliseconds around Envoy's exit.",
  ].join('\n');
}

export const idleConnections: Scenario = { name: 'idle-connections', title: "8. Idle connections at Envoy's exit", run };
