// What docs/envoy-behaviour.md says real Envoy does to its listeners and connections around a
// drain, beyond what the protocol and contract tests already hold: the pinned Envoy started from the
// chart's bootstrap and flags (`--drain-strategy immediate`, listeners MODIFY_ONLY), on loopback.
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pollUntil } from '../support/poll.js';
import { http1Answer } from '../support/protocols/clients.js';
import { type ChartEnvoy, startChartEnvoy } from '../support/real-envoy/chart-envoy.js';
import { get } from '../support/real-envoy/process.js';

const started: ChartEnvoy[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  for (const envoy of started.splice(0)) await envoy.stop();
});

async function envoyWithClient(drainTimeS?: number): Promise<{ envoy: ChartEnvoy; port: number; busy: Agent }> {
  const envoy = await startChartEnvoy(drainTimeS === undefined ? {} : { drainTimeS });
  started.push(envoy);
  const port = envoy.ports.ingress;
  if (port === undefined) throw new Error(`no ingress listener among ${Object.keys(envoy.ports).join(', ')}`);
  const busy = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(busy);
  expect((await http1Answer({ port, agent: busy })).connection).not.toBe('close');
  return { envoy, port, busy };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const post = (envoy: ChartEnvoy, path: string) => get(envoy.adminAddress, path, 'POST');

describe("real Envoy's listeners and connections around a drain (chart bootstrap)", () => {
  it('/healthcheck/fail turns the admin /ready to 503 DRAINING and leaves MODIFY_ONLY listeners alone: the next response keeps its connection', async () => {
    const { envoy, port, busy } = await envoyWithClient();
    expect(await post(envoy, '/healthcheck/fail')).toMatchObject({ status: 200, body: 'OK\n' });
    expect(await get(envoy.adminAddress, '/ready')).toMatchObject({ status: 503, body: 'DRAINING\n' });
    expect((await http1Answer({ port, agent: busy })).connection).not.toBe('close');
  });

  it('drain_listeners?graceful&skip_exit: the next response closes its connection, and a new connection is still served, closing too', async () => {
    const { envoy, port, busy } = await envoyWithClient();
    expect(await post(envoy, '/drain_listeners?graceful&skip_exit')).toMatchObject({ status: 200, body: 'OK\n' });
    expect((await http1Answer({ port, agent: busy })).connection).toBe('close');
    expect(await http1Answer({ port, agent: false })).toMatchObject({ status: 200, connection: 'close' });
    expect(envoy.child.exitCode).toBeNull();
  });

  it('drain_listeners?graceful without skip_exit: the listeners stop accepting once the drain time is over, and the admin API still answers', async () => {
    const { envoy, port } = await envoyWithClient(1);
    expect(await post(envoy, '/drain_listeners?graceful')).toMatchObject({ status: 200, body: 'OK\n' });
    await pollUntil('the ingress listener refusing connections', async () => !(await accepts(port)), { timeoutMs: 20_000, everyMs: 50 });
    expect((await get(envoy.adminAddress, '/server_info')).status).toBe(200);
  });

  it('drain_listeners?skip_exit (no graceful) is accepted and closes the next response; plain drain_listeners stops the listeners', async () => {
    const { envoy, port, busy } = await envoyWithClient();
    expect(await post(envoy, '/drain_listeners?skip_exit')).toMatchObject({ status: 200, body: 'OK\n' });
    expect((await http1Answer({ port, agent: busy })).connection).toBe('close');
    expect(await accepts(port)).toBe(true);

    const plain = await envoyWithClient();
    expect(await post(plain.envoy, '/drain_listeners')).toMatchObject({ status: 200, body: 'OK\n' });
    await pollUntil('the ingress listener refusing connections', async () => !(await accepts(plain.port)), { timeoutMs: 20_000, everyMs: 20 });
    expect((await get(plain.envoy.adminAddress, '/server_info')).status).toBe(200);
  });
});
