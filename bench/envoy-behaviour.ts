// Measures what real Envoy does around a drain, for docs/envoy-behaviour.md:
//   node scripts/run-ts.mjs bench/envoy-behaviour.ts [startup|gauges|drain|long-requests|non-graceful]…
// Each fact is observed on the pinned Envoy started from the chart's bootstrap and flags
// (test/support/real-envoy/), on loopback, one worker, polling its admin API every 5 ms.
import { once } from 'node:events';
import { Agent, createServer } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { keepAliveRequest } from '../test/support/clients.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { chartEnvoyArgs, renderedPod, startChartEnvoy } from '../test/support/real-envoy/chart-envoy.js';
import { get, type RealEnvoy, startRealEnvoy } from '../test/support/real-envoy/process.js';

async function stat(envoy: RealEnvoy, name: string): Promise<number> {
  const answer = await get(envoy.adminAddress, `/stats?filter=^${name.replace(/\./g, '\\.')}$&format=json`);
  return (JSON.parse(answer.body) as { stats: Array<{ value: number }> }).stats[0]?.value ?? Number.NaN;
}

/** Milliseconds from `since` until the stat equals `want` (polled every 5 ms), or -1 after `limitMs`. */
async function until(envoy: RealEnvoy, name: string, want: number, since: number, limitMs = 12_000): Promise<number> {
  for (;;) {
    if ((await stat(envoy, name)) === want) return Math.round(performance.now() - since);
    if (performance.now() - since > limitMs) return -1;
    await sleep(5);
  }
}


function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(false));
  });
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function startup(runs: number): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const t0 = performance.now();
    const envoy = await startChartEnvoy();
    times.push(Math.round(performance.now() - t0));
    await envoy.stop();
  }
  console.log(`start (spawn → admin /ready 200 and every listener bound), ${runs} runs: median ${median(times)} ms, min ${Math.min(...times)}, max ${Math.max(...times)}`);
}

async function gauges(): Promise<void> {
  const envoy = await startChartEnvoy();
  const port = envoy.ports['ingress'] as number;
  console.log(`server.total_connections right after start, one connection open: ${(await keepAliveRequest(port, new Agent({ keepAlive: true })), await stat(envoy, 'server.total_connections'))}`);
  const opens: number[] = [];
  const closes: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const agent = new Agent({ keepAlive: true });
    const t0 = performance.now();
    const { socket } = await keepAliveRequest(port, agent);
    opens.push(await until(envoy, 'listener.ingress.downstream_cx_active', 2, t0));
    const t1 = performance.now();
    socket.destroy();
    closes.push(await until(envoy, 'listener.ingress.downstream_cx_active', 1, t1));
    agent.destroy();
  }
  console.log(`listener.ingress.downstream_cx_active after an open: ${opens.join(', ')} ms; after a close: ${closes.join(', ')} ms`);
  const uptime0 = await stat(envoy, 'server.uptime');
  const t2 = performance.now();
  const flushAt = await until(envoy, 'server.uptime', uptime0 + 5, t2, 7_000);
  console.log(`server.uptime: ${uptime0}, then ${uptime0 + 5} after ${flushAt} ms (moves only at a flush)`);
  const agent = new Agent({ keepAlive: true });
  const t3 = performance.now();
  const { socket } = await keepAliveRequest(port, agent);
  const seen = await until(envoy, 'server.total_connections', 2, t3);
  const t4 = performance.now();
  socket.destroy();
  const gone = await until(envoy, 'server.total_connections', 1, t4);
  console.log(`server.total_connections: an open shows after ${seen} ms, a close after ${gone} ms (stats_flush_interval 5 s)`);
  agent.destroy();
  await envoy.stop();
}

async function drain(drainTimeS: number, skipExit: boolean): Promise<void> {
  const envoy = await startChartEnvoy({ drainTimeS });
  const port = envoy.ports['ingress'] as number;
  const busy = new Agent({ keepAlive: true, maxSockets: 1 });
  const idle = new Agent({ keepAlive: true, maxSockets: 1 });
  await keepAliveRequest(port, busy);
  const idleSocket = (await keepAliveRequest(port, idle)).socket;
  let idleClosed = 0;
  idleSocket.on('close', () => (idleClosed = performance.now()));
  const h2busy = h2connect(`http://127.0.0.1:${port}`);
  const h2idle = h2connect(`http://127.0.0.1:${port}`);
  const goaways: Record<string, number[]> = { busy: [], idle: [] };
  for (const [name, session] of [['busy', h2busy], ['idle', h2idle]] as const) {
    session.on('error', () => undefined);
    session.on('goaway', () => goaways[name]?.push(Math.round(performance.now() - drainAt)));
    const stream = session.request({ ':path': '/' });
    stream.resume();
    stream.end();
    await once(stream, 'end');
  }
  // MODIFY_ONLY listeners ignore /healthcheck/fail: the next response still keeps its connection.
  await get(envoy.adminAddress, '/healthcheck/fail', 'POST');
  const afterFail = await keepAliveRequest(port, busy);
  const readiness = await keepAliveRequest(envoy.ports['ready'] as number, false, '/ready');
  const drainAt = performance.now();
  const query = skipExit ? 'graceful&skip_exit' : 'graceful';
  const answer = await get(envoy.adminAddress, `/drain_listeners?${query}`, 'POST');
  const afterDrain = await keepAliveRequest(port, busy);
  const stream = h2busy.request({ ':path': '/' });
  stream.resume();
  stream.end();
  await once(stream, 'end');
  const fresh = await keepAliveRequest(port, false);
  let stoppedAt = -1;
  while (performance.now() - drainAt < (drainTimeS + 3) * 1_000) {
    if (!(await accepts(port))) {
      stoppedAt = Math.round(performance.now() - drainAt);
      break;
    }
    await sleep(50);
  }
  const info = JSON.parse((await get(envoy.adminAddress, '/server_info')).body) as { state: string };
  console.log(`drain ${query}, --drain-time-s ${drainTimeS}: admin ${answer.status} ${JSON.stringify(answer.body)}`);
  console.log(`  after /healthcheck/fail alone: ingress response Connection=${afterFail.connection ?? '(none)'}; readiness listener /ready ${readiness.status}`);
  console.log(`  after the drain: busy HTTP/1.1 response Connection=${afterDrain.connection ?? '(none)'}; new connection answered ${fresh.status} Connection=${fresh.connection ?? '(none)'}`);
  console.log(`  HTTP/2 GOAWAY frames (ms after the drain): busy session ${JSON.stringify(goaways['busy'])}, idle session ${JSON.stringify(goaways['idle'])}`);
  console.log(`  listeners stop accepting: ${stoppedAt < 0 ? `not within ${drainTimeS + 3} s` : `after ${stoppedAt} ms`}; idle HTTP/1.1 connection ${idleClosed === 0 ? 'still open' : `closed after ${Math.round(idleClosed - drainAt)} ms`}; state ${info.state}; Envoy ${envoy.child.exitCode === null ? 'running' : 'exited'}`);
  const termAt = performance.now();
  envoy.child.kill('SIGTERM');
  const exit = await envoy.exited;
  console.log(`  SIGTERM: exit ${JSON.stringify(exit)} after ${Math.round(performance.now() - termAt)} ms; idle HTTP/1.1 closed ${idleClosed === 0 ? 'never' : `${Math.round(idleClosed - termAt)} ms after SIGTERM`}`);
  h2busy.destroy();
  h2idle.destroy();
  busy.destroy();
  idle.destroy();
  await envoy.stop();
}

async function nonGraceful(query: string): Promise<void> {
  const envoy = await startChartEnvoy();
  const port = envoy.ports['ingress'] as number;
  const busy = new Agent({ keepAlive: true, maxSockets: 1 });
  await keepAliveRequest(port, busy);
  const t0 = performance.now();
  const answer = await get(envoy.adminAddress, `/drain_listeners${query}`, 'POST');
  const next = await keepAliveRequest(port, busy).then((r) => r.connection ?? '(none)', (error: Error) => error.message);
  let stoppedAt = -1;
  while (performance.now() - t0 < 3_000) {
    if (!(await accepts(port))) {
      stoppedAt = Math.round(performance.now() - t0);
      break;
    }
    await sleep(5);
  }
  console.log(`drain_listeners${query} (no graceful): ${answer.status} ${JSON.stringify(answer.body)}; next response on an open keep-alive connection: Connection=${next}; listeners stop accepting ${stoppedAt < 0 ? 'not within 3 s' : `after ${stoppedAt} ms`}; Envoy ${envoy.child.exitCode === null ? 'running' : 'exited'}`);
  busy.destroy();
  await envoy.stop();
}

/** The chart's bootstrap with its ingress routed to `upstreamPort` on loopback instead of its placeholder answer. */
async function proxyingEnvoy(upstreamPort: number): Promise<RealEnvoy> {
  const rendered = await renderedPod();
  // The placeholder route's direct answer becomes a route to the upstream, on the ingress listener only.
  const bootstrap = JSON.parse(JSON.stringify(rendered.bootstrap), (key, value: unknown) =>
    key === 'routes' && JSON.stringify(value).includes('set `listeners`') ? [{ match: { prefix: '/' }, route: { cluster: 'upstream', timeout: '30s' } }] : value,
  ) as typeof rendered.bootstrap;
  const upstream = { name: 'upstream', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'upstream', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] } };
  const clusters = [...(bootstrap.static_resources?.clusters ?? []), upstream];
  return startRealEnvoy({ bootstrap: { ...bootstrap, static_resources: { ...bootstrap.static_resources, clusters } }, args: chartEnvoyArgs(rendered, 2) });
}

async function longRequests(): Promise<void> {
  const holdMs = 1_500;
  const server = createServer((_req, res) => void setTimeout(() => res.end('slow\n'), holdMs));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const envoy = await proxyingEnvoy((server.address() as { port: number }).port);
  const port = envoy.ports['ingress'] as number;
  const h2 = h2connect(`http://127.0.0.1:${port}`);
  h2.on('error', () => undefined);
  let goawayAt = 0;
  h2.on('goaway', () => (goawayAt = performance.now()));
  const t0 = performance.now();
  const h1Answer = keepAliveRequest(port, new Agent({ keepAlive: true }));
  const h2Stream = h2.request({ ':path': '/' });
  h2Stream.resume();
  h2Stream.end();
  const h2Done = once(h2Stream, 'end').then(() => performance.now());
  const seen = await until(envoy, 'http.ingress.downstream_rq_active', 2, t0);
  const drainAt = performance.now();
  await get(envoy.adminAddress, '/drain_listeners?graceful&skip_exit', 'POST');
  const during = { rq: await stat(envoy, 'http.ingress.downstream_rq_active'), cx: await stat(envoy, 'listener.ingress.downstream_cx_active') };
  const answer = await h1Answer;
  const h1At = performance.now();
  const h2At = await h2Done;
  const afterRq = await until(envoy, 'http.ingress.downstream_rq_active', 0, h1At);
  console.log(`two long requests (${holdMs} ms upstream), HTTP/1.1 and HTTP/2: http.ingress.downstream_rq_active reads 2 after ${seen} ms; right after the drain rq_active ${during.rq}, cx_active ${during.cx}`);
  console.log(`  HTTP/1.1 answer ${answer.status} Connection=${answer.connection ?? '(none)'} ${Math.round(h1At - drainAt)} ms after the drain; HTTP/2 answer ${Math.round(h2At - drainAt)} ms after; GOAWAY ${goawayAt === 0 ? 'none' : `${Math.round(goawayAt - drainAt)} ms after the drain`}; rq_active back to 0 ${afterRq} ms after the HTTP/1.1 answer`);
  h2.destroy();
  await envoy.stop();
  await new Promise((resolve) => server.close(resolve));
}

const SECTIONS: Readonly<Record<string, () => Promise<void>>> = {
  startup: () => startup(10),
  gauges,
  drain: async () => {
    await drain(2, true);
    await drain(2, false);
  },
  'long-requests': longRequests,
  'non-graceful': async () => {
    await nonGraceful('?skip_exit');
    await nonGraceful('');
  },
};

/** Every section, or only those named on the command line. */
async function main(): Promise<void> {
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(SECTIONS);
  console.log(`Envoy ${await envoyVersion()}, chart bootstrap, --concurrency 1, ${new Date().toISOString()}`);
  for (const name of names) {
    const section = SECTIONS[name];
    if (section === undefined) throw new Error(`unknown section ${name}; one of ${Object.keys(SECTIONS).join(', ')}`);
    await section();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
