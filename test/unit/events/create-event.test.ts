// The Event's POST against a stand-in HTTPS server, for what a real API server does not do on
// demand: never answer, answer with a flood, or cut the connection. The real API server's own
// answers (201, 403) are checked in test/kube/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CreateOutcome, createEvent, disruptionReason, podDisruption } from '../../../src/events/create-event.js';
import { drainEvent } from '../../../src/events/drain-event.js';
import { DrainEvents } from '../../../src/events/drain-events.js';
import type { EventsTarget } from '../../../src/events/in-cluster.js';
import { type KubeEvent, kubeEvent } from '../../../src/events/kube-event.js';
import type { LogFields, Logger } from '../../../src/shared/log.js';
import { makeCertificate } from '../../support/protocols/certs.js';

const TOKEN = 'never-logged-token-value';
const dir = mkdtempSync(join(tmpdir(), 'esm-events-'));
let server: Server;
let handler: (request: IncomingMessage, response: ServerResponse, body: string) => void = () => undefined;
const seen: Array<{ method: string; path: string; authorization: string; body: string }> = [];
let target: EventsTarget;

beforeAll(async () => {
  const cert = makeCertificate(dir, 'apiserver', 'IP:127.0.0.1');
  const serviceAccountDir = join(dir, 'sa');
  mkdirSync(serviceAccountDir);
  writeFileSync(join(serviceAccountDir, 'token'), `${TOKEN}\n`);
  writeFileSync(join(serviceAccountDir, 'ca.crt'), readFileSync(cert.certPath));
  server = createServer({ cert: readFileSync(cert.certPath), key: readFileSync(cert.keyPath) }, (request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', path: request.url ?? '', authorization: request.headers.authorization ?? '', body });
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  target = { host: '127.0.0.1', port, serviceAccountDir, pod: { name: 'gw-1', namespace: 'edge', uid: 'u-1', nodeName: undefined } };
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const event = () =>
  kubeEvent(
    target.pod,
    drainEvent({ result: 'drained', connections: 0, elapsedMs: 1000, exitCode: 0, finishedAt: new Date().toISOString() }, Date.now()),
    new Date(),
    'abc',
  );

function recordingLog(): Logger & { lines: Array<{ level: string; fields: LogFields; msg: string }> } {
  const lines: Array<{ level: string; fields: LogFields; msg: string }> = [];
  const at = (level: string) => (fields: LogFields | string, msg?: string) =>
    lines.push(typeof fields === 'string' ? { level, fields: {}, msg: fields } : { level, fields, msg: msg ?? '' });
  const log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log, lines };
  return log as Logger & { lines: typeof lines };
}

describe('createEvent', () => {
  it('POSTs the Event to the namespace with the token, and takes 201 as created', async () => {
    handler = (_request, response) => response.writeHead(201, { 'Content-Type': 'application/json' }).end('{}');
    seen.length = 0;
    await expect(createEvent(target, event())).resolves.toEqual({ ok: true, status: 201 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/api/v1/namespaces/edge/events', authorization: `Bearer ${TOKEN}` });
    expect(JSON.parse(seen[0]?.body ?? '')).toMatchObject({ reason: 'EnvoyDrained', involvedObject: { name: 'gw-1', uid: 'u-1' } });
  });

  it("words a refusal with the API server's Status reason, never the token", async () => {
    handler = (_request, response) =>
      response.writeHead(403).end(
        JSON.stringify({
          kind: 'Status',
          reason: 'Forbidden',
          message: 'events is forbidden: User "system:serviceaccount:edge:gw" cannot create resource "events"',
        }),
      );
    const outcome = await createEvent(target, event());
    expect(outcome).toMatchObject({ ok: false, status: 403, why: expect.stringMatching(/^Forbidden: events is forbidden/) });
    expect(JSON.stringify(outcome)).not.toContain(TOKEN);
  });

  it('gives up at its deadline when no answer comes, after one request', async () => {
    handler = () => undefined; // never answers
    seen.length = 0;
    const started = performance.now();
    const outcome = await createEvent(target, event(), 300);
    expect(outcome).toEqual({ ok: false, status: undefined, why: 'no answer within 300 ms' });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(seen).toHaveLength(1);
  });

  it('reads at most a few KiB of an answer that never ends', async () => {
    handler = (_request, response) => {
      response.writeHead(500);
      const chunk = 'x'.repeat(64 * 1024);
      const pump = (): void => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    };
    const outcome = await createEvent(target, event(), 5_000);
    expect(outcome).toEqual({ ok: false, status: 500, why: 'the answer is not a Kubernetes Status' });
  });

  it('reports a connection cut before any answer', async () => {
    handler = (request) => request.socket.destroy();
    await expect(createEvent(target, event())).resolves.toMatchObject({ ok: false, status: undefined });
  });

  it('does not send without a token it can read', async () => {
    seen.length = 0;
    await expect(createEvent({ ...target, serviceAccountDir: join(dir, 'none') }, event())).resolves.toMatchObject({
      ok: false,
      why: expect.stringContaining('token unreadable'),
    });
    expect(seen).toHaveLength(0);
  });
});

describe('podDisruption', () => {
  const pod = (conditions: unknown[]): string => JSON.stringify({ kind: 'Pod', metadata: { name: 'gw-1' }, status: { phase: 'Running', conditions } });

  it("GETs the pod with the token and reads its DisruptionTarget condition's reason", async () => {
    seen.length = 0;
    handler = (_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        pod([
          { type: 'Ready', status: 'True' },
          { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' },
        ]),
      );
    await expect(podDisruption(target)).resolves.toBe('EvictionByEvictionAPI');
    expect(seen.at(-1)).toMatchObject({ method: 'GET', path: '/api/v1/namespaces/edge/pods/gw-1', authorization: `Bearer ${TOKEN}` });
  });

  it('finds none in a pod without the condition, in a refusal, a cut answer, one over its bound, or none in time', async () => {
    handler = (_request, response) => response.writeHead(200).end(pod([{ type: 'Ready', status: 'True' }]));
    await expect(podDisruption(target)).resolves.toBeUndefined();
    handler = (_request, response) => response.writeHead(403).end('{"kind":"Status","reason":"Forbidden"}');
    await expect(podDisruption(target)).resolves.toBeUndefined();
    handler = (_request, response) => {
      response.writeHead(200);
      response.write(pod([{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }]).slice(0, 40));
      response.socket?.destroy();
    };
    await expect(podDisruption(target)).resolves.toBeUndefined();
    handler = (_request, response) =>
      response.writeHead(200).end(pod([{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler', message: 'x'.repeat(600 * 1024) }]));
    await expect(podDisruption(target)).resolves.toBeUndefined();
    handler = () => undefined;
    const started = Date.now();
    await expect(podDisruption(target, 300)).resolves.toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('takes only a true condition and a reason that is one word', () => {
    expect(disruptionReason(pod([{ type: 'DisruptionTarget', status: 'False', reason: 'EvictionByEvictionAPI' }]))).toBeUndefined();
    expect(disruptionReason(pod([{ type: 'DisruptionTarget', status: 'True', reason: 'Evicted; rm -rf' }]))).toBeUndefined();
    expect(disruptionReason(pod([{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet' }]))).toBe('TerminationByKubelet');
    expect(disruptionReason('not json')).toBeUndefined();
  });
});

const noDisruption = async (): Promise<undefined> => undefined;

describe('DrainEvents', () => {
  // The policy alone: createEvent's own behaviour is tested above, and against a real API server in test/kube/.
  const answers = (...outcomes: CreateOutcome[]) => {
    const calls: string[] = [];
    const create = async (_target: EventsTarget, event: KubeEvent): Promise<CreateOutcome> => {
      calls.push(event.reason);
      return outcomes[calls.length - 1] ?? { ok: true, status: 201 };
    };
    return { calls, create };
  };

  it('one line per attempt; after a 403 nothing more is attempted', async () => {
    const { calls, create } = answers({ ok: false, status: 403, why: 'Forbidden: no' });
    const log = recordingLog();
    const events = new DrainEvents(target, log, { create, readDisruption: noDisruption });
    events.report('unreadable');
    await events.settled();
    events.report('unreadable');
    await events.settled();
    expect(calls).toEqual(['EnvoyDrainUnreported']);
    expect(log.lines).toEqual([
      {
        level: 'warn',
        fields: { reason: 'EnvoyDrainUnreported', type: 'Warning', status: 403, why: 'Forbidden: no' },
        msg: 'could not create the drain event (no further events: the service account lacks permission)',
      },
    ]);
  });

  it('tries again for the next drain after a timeout', async () => {
    const { calls, create } = answers({ ok: false, status: undefined, why: 'no answer within 2000 ms' }, { ok: true, status: 201 });
    const log = recordingLog();
    const events = new DrainEvents(target, log, { create, readDisruption: noDisruption });
    events.report('unreadable');
    await events.settled();
    events.report('unreadable');
    await events.settled();
    expect(calls).toHaveLength(2);
    expect(log.lines.map((line) => `${line.level} ${line.msg}`)).toEqual(['warn could not create the drain event', 'info drain event created']);
  });

  it("names why the pod was terminated in the Event's message and its log line", async () => {
    const { create } = answers();
    const sent: KubeEvent[] = [];
    const log = recordingLog();
    const events = new DrainEvents(target, log, {
      create: async (t, e) => {
        sent.push(e);
        return create(t, e);
      },
      readDisruption: async () => 'EvictionByEvictionAPI',
    });
    events.report({ result: 'drained', connections: 0, elapsedMs: 4_100, exitCode: 0, finishedAt: new Date().toISOString() });
    await events.settled();
    expect(sent[0]?.message).toMatch(
      /^drained in 4\.1 s, 0 connections left, Envoy released \d+ ms after the drain ended; pod terminated for EvictionByEvictionAPI$/,
    );
    expect(log.lines[0]?.fields).toMatchObject({ reason: 'EnvoyDrained', disruption: 'EvictionByEvictionAPI' });
  });

  it('settles only once the Event in flight is answered', async () => {
    let answer: (outcome: CreateOutcome) => void = () => undefined;
    let asked: () => void = () => undefined;
    const creating = new Promise<void>((resolve) => (asked = resolve));
    const create = (): Promise<CreateOutcome> =>
      new Promise((resolve) => {
        answer = resolve;
        asked();
      });
    const events = new DrainEvents(target, recordingLog(), { create, readDisruption: noDisruption });
    events.report('unreadable');
    await creating;
    let settled = false;
    const waiting = events.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    answer({ ok: true, status: 201 });
    await waiting;
    expect(settled).toBe(true);
  });
});
