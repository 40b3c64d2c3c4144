// One POST of an Event to the API server over Node's own HTTPS: no client library (one would cost
// the single executable start-up time and memory for a single request per pod lifetime). One
// attempt, one deadline over the whole exchange, the answer read up to a few KiB.
import type { IncomingMessage } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import { readSmallFile } from '../handoff/small-file.js';
import { errorMessage } from '../shared/errors.js';
import type { EventsTarget } from './in-cluster.js';
import type { KubeEvent } from './kube-event.js';

/** The whole exchange (connect, TLS, request, answer): an Event is worth no more. */
export const EVENT_TIMEOUT_MS = 2_000;
/** A Status or the created Event is a few hundred bytes; the rest is not read. */
export const MAX_ANSWER_BYTES = 8 * 1024;
/** A projected token is ~1 KiB, a CA bundle a few. */
const MAX_TOKEN_BYTES = 16 * 1024;
const MAX_CA_BYTES = 256 * 1024;

export type CreateOutcome =
  | { readonly ok: true; readonly status: number }
  /** `status`: the API server's answer, when there was one; `why`: what went wrong, never the token. */
  | { readonly ok: false; readonly status: number | undefined; readonly why: string };

export async function createEvent(target: EventsTarget, event: KubeEvent, timeoutMs = EVENT_TIMEOUT_MS): Promise<CreateOutcome> {
  const [token, ca] = await Promise.all([readSmallFile(join(target.serviceAccountDir, 'token'), MAX_TOKEN_BYTES), readSmallFile(join(target.serviceAccountDir, 'ca.crt'), MAX_CA_BYTES)]);
  if (typeof token !== 'object' || token.text.trim() === '') return { ok: false, status: undefined, why: `service-account token unreadable in ${target.serviceAccountDir}` };
  if (typeof ca !== 'object') return { ok: false, status: undefined, why: `ca.crt unreadable in ${target.serviceAccountDir}` };
  const body = JSON.stringify(event);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: CreateOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(outcome);
    };
    const options: RequestOptions = {
      host: target.host,
      port: target.port,
      method: 'POST',
      path: `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`,
      headers: {
        Authorization: `Bearer ${token.text.trim()}`,
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'Content-Length': Buffer.byteLength(body),
      },
      ca: ca.text,
      agent: false,
    };
    const post = request(options, (answer) =>
      readAnswer(answer, (outcome) => {
        finish(outcome);
        post.destroy();
      }),
    );
    const deadline = setTimeout(() => {
      finish({ ok: false, status: undefined, why: `no answer within ${timeoutMs} ms` });
      post.destroy();
    }, timeoutMs);
    post.on('error', (error) => finish({ ok: false, status: undefined, why: errorMessage(error) }));
    post.end(body);
  });
}

/** The outcome an answer says, from at most MAX_ANSWER_BYTES of its body. */
function readAnswer(answer: IncomingMessage, done: (outcome: CreateOutcome) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  answer.on('data', (chunk: Buffer) => {
    if (size >= MAX_ANSWER_BYTES) return;
    chunks.push(chunk);
    size += chunk.length;
    // Enough to say what happened: the rest of a large answer is not waited for.
    if (size >= MAX_ANSWER_BYTES) answer.destroy();
  });
  const ended = (): void => {
    const status = answer.statusCode ?? 0;
    if (status === 201 || status === 200) done({ ok: true, status });
    else done({ ok: false, status, why: statusReason(Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8')) });
  };
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
