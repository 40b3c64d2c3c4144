// The manager's two calls to the API server over Node's own HTTPS: no client library (one would
// cost the single executable start-up time and memory for two requests per pod lifetime). Each is
// one attempt, one deadline over the whole exchange, its answer read only up to a bound.
import type { IncomingMessage } from 'node:http';
import { type RequestOptions, request } from 'node:https';
import { join } from 'node:path';
import { readSmallFile } from '../handoff/small-file.js';
import { errorMessage } from '../shared/errors.js';
import type { EventsTarget } from './in-cluster.js';
import type { KubeEvent } from './kube-event.js';

/** The whole exchange (connect, TLS, request, answer): an Event is worth no more. */
const EVENT_TIMEOUT_MS = 2_000;
/** A Status or the created Event is a few hundred bytes; the rest is not read. */
const MAX_ANSWER_BYTES = 8 * 1024;
/** Reading the pod, before the Event: its reason to terminate is worth a second at most. */
const POD_READ_TIMEOUT_MS = 1_000;
/** A pod object is a few KiB to a few tens (managed fields); one larger is not ours to parse. */
const MAX_POD_BYTES = 512 * 1024;
/** A projected token is ~1 KiB, a CA bundle a few. */
const MAX_TOKEN_BYTES = 16 * 1024;
const MAX_CA_BYTES = 256 * 1024;

export type CreateOutcome =
  | { readonly ok: true; readonly status: number }
  /** `status`: the API server's answer, when there was one; `why`: what went wrong, never the token. */
  | { readonly ok: false; readonly status: number | undefined; readonly why: string };

export async function createEvent(target: EventsTarget, event: KubeEvent, timeoutMs = EVENT_TIMEOUT_MS): Promise<CreateOutcome> {
  const answer = await apiRequest(
    target,
    'POST',
    `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`,
    JSON.stringify(event),
    MAX_ANSWER_BYTES,
    timeoutMs,
  );
  if ('why' in answer) return { ok: false, status: undefined, why: answer.why };
  if (answer.status === 201 || answer.status === 200) return { ok: true, status: answer.status };
  return { ok: false, status: answer.status, why: statusReason(answer.body) };
}

/**
 * Why the pod is being terminated: the reason of its `DisruptionTarget` condition when it has one
 * (EvictionByEvictionAPI, PreemptionByScheduler, DeletionByTaintManager, TerminationByKubelet, …).
 * Undefined when it has none, or the pod cannot be read (no permission, no answer in time).
 */
export async function podDisruption(target: EventsTarget, timeoutMs = POD_READ_TIMEOUT_MS): Promise<string | undefined> {
  const { namespace, name } = target.pod;
  const answer = await apiRequest(
    target,
    'GET',
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
    undefined,
    MAX_POD_BYTES,
    timeoutMs,
  );
  if ('why' in answer || answer.status !== 200 || !answer.complete) return undefined;
  return disruptionReason(answer.body);
}

/** The DisruptionTarget condition's reason in a pod's JSON, when it is true and a reason is given. */
export function disruptionReason(podJson: string): string | undefined {
  try {
    const pod = JSON.parse(podJson) as { status?: { conditions?: unknown } };
    const conditions = Array.isArray(pod.status?.conditions) ? (pod.status.conditions as Array<Record<string, unknown>>) : [];
    const condition = conditions.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
    const reason = condition?.reason;
    return typeof reason === 'string' && /^[A-Za-z][A-Za-z0-9]{0,127}$/.test(reason) ? reason : undefined;
  } catch {
    return undefined;
  }
}

type ApiAnswer = { readonly status: number; readonly body: string; readonly complete: boolean } | { readonly why: string };

/** One request with the pod's token and CA; the answer's body up to `maxBytes` (`complete`: nothing was left unread). */
async function apiRequest(
  target: EventsTarget,
  method: 'GET' | 'POST',
  path: string,
  body: string | undefined,
  maxBytes: number,
  timeoutMs: number,
): Promise<ApiAnswer> {
  const [token, ca] = await Promise.all([
    readSmallFile(join(target.serviceAccountDir, 'token'), MAX_TOKEN_BYTES),
    readSmallFile(join(target.serviceAccountDir, 'ca.crt'), MAX_CA_BYTES),
  ]);
  if (typeof token !== 'object' || token.text.trim() === '') return { why: `service-account token unreadable in ${target.serviceAccountDir}` };
  if (typeof ca !== 'object') return { why: `ca.crt unreadable in ${target.serviceAccountDir}` };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: ApiAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(answer);
    };
    const options: RequestOptions = {
      host: target.host,
      port: target.port,
      method,
      path,
      headers: {
        Authorization: `Bearer ${token.text.trim()}`,
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
      },
      ca: ca.text,
      agent: false,
    };
    const call = request(options, (answer) =>
      readAnswer(answer, maxBytes, (read) => {
        finish(read);
        call.destroy();
      }),
    );
    const deadline = setTimeout(() => {
      finish({ why: `no answer within ${timeoutMs} ms` });
      call.destroy();
    }, timeoutMs);
    call.on('error', (error) => finish({ why: errorMessage(error) }));
    call.end(body);
  });
}

/** The status and at most `maxBytes` of the body; a larger answer is cut and not waited for. */
function readAnswer(answer: IncomingMessage, maxBytes: number, done: (answer: ApiAnswer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let complete = true;
  answer.on('data', (chunk: Buffer) => {
    if (size >= maxBytes) return;
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) {
      complete = false;
      answer.destroy();
    }
  });
  const ended = (): void =>
    done({ status: answer.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8'), complete: complete && answer.complete });
  answer.on('end', ended);
  answer.on('close', ended);
  answer.on('error', () => undefined);
}

/** The API server's own words from a Status answer, short; the status code alone otherwise. */
function statusReason(text: string): string {
  try {
    const status = JSON.parse(text) as { reason?: unknown; message?: unknown };
    const reason = typeof status.reason === 'string' ? status.reason : 'no reason';
    const message = typeof status.message === 'string' ? `: ${status.message.slice(0, 300)}` : '';
    return `${reason}${message}`;
  } catch {
    return 'the answer is not a Kubernetes Status';
  }
}
