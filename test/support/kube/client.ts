// A small client for the tests' Kubernetes API server: node:https with its CA and a bearer token,
// every request bounded in time and size. Objects are addressed by apiVersion and kind, resolved
// through the server's own discovery; the API server's warnings (Pod Security's among them) come
// back with each answer.
import { request } from 'node:https';

export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string>; readonly [field: string]: unknown };
  readonly [field: string]: unknown;
}

export interface KubeResponse {
  readonly status: number;
  readonly body: unknown;
  /** The texts of the response's `Warning:` headers (admission warnings). */
  readonly warnings: readonly string[];
}

/** A request the API server refused: its HTTP status and its Status object's reason and message. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export interface KubeClientOptions {
  readonly url: string;
  readonly caPem: string;
  readonly token: string;
  /** Per request, connection to last byte (default 15 s). */
  readonly timeoutMs?: number;
}

const MAX_BODY = 8 * 1024 * 1024;
const FIELD_MANAGER = 'esm-tests';

export type KubeClient = ReturnType<typeof kubeClient>;

export function kubeClient(options: KubeClientOptions) {
  const resources = new Map<string, { plural: string; namespaced: boolean }>();

  function send(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<KubeResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, options.url),
        {
          method,
          ca: options.caPem,
          timeout: options.timeoutMs ?? 15_000,
          headers: { authorization: `Bearer ${options.token}`, accept: 'application/json', ...(payload === undefined ? {} : { 'content-type': contentType }) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY) req.destroy(new Error(`${method} ${path}: answer larger than ${MAX_BODY} bytes`));
            else chunks.push(chunk);
          });
          res.once('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // Not JSON (readyz answers text): kept as it came.
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, warnings: warningsOf(res.rawHeaders) });
          });
          res.once('error', reject);
        },
      );
      req.once('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${options.timeoutMs ?? 15_000} ms`)));
      req.once('error', reject);
      req.end(payload);
    });
  }

  /** Sends, and throws KubeApiError unless the status is 2xx. */
  async function call(method: string, path: string, body?: unknown, contentType?: string): Promise<KubeResponse> {
    const response = await send(method, path, body, contentType);
    if (response.status < 200 || response.status > 299) {
      const status = (response.body ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(
        response.status,
        status.reason ?? '',
        `${method} ${path}: ${response.status} ${status.message ?? JSON.stringify(response.body).slice(0, 500)}`,
      );
    }
    return response;
  }

  /** The collection path of a kind, e.g. /apis/apps/v1/namespaces/ns/deployments. */
  async function collection(apiVersion: string, kind: string, namespace?: string): Promise<string> {
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let resource = resources.get(`${apiVersion}/${kind}`);
    if (resource === undefined) {
      const list = (await call('GET', base)).body as { resources?: { name: string; kind: string; namespaced: boolean }[] };
      for (const r of list.resources ?? []) if (!r.name.includes('/')) resources.set(`${apiVersion}/${r.kind}`, { plural: r.name, namespaced: r.namespaced });
      resource = resources.get(`${apiVersion}/${kind}`);
      if (resource === undefined) throw new Error(`the API server serves no ${kind} in ${apiVersion}`);
    }
    if (!resource.namespaced) return `${base}/${resource.plural}`;
    if (namespace === undefined) throw new Error(`${kind} is namespaced: name a namespace`);
    return `${base}/namespaces/${namespace}/${resource.plural}`;
  }

  const objectPath = async (object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<string> =>
    `${await collection(object.apiVersion, object.kind, object.metadata.namespace)}/${object.metadata.name}`;

  return {
    url: options.url,
    send,
    call,
    /** POSTs the object; `dryRun` runs validation and admission (Pod Security's enforce decision) without storing it. */
    async create<T extends KubeObject>(object: T, { dryRun = false } = {}): Promise<{ object: T; warnings: readonly string[] }> {
      const path = await collection(object.apiVersion, object.kind, object.metadata.namespace);
      const response = await call('POST', `${path}${dryRun ? '?dryRun=All' : ''}`, object);
      return { object: response.body as T, warnings: response.warnings };
    },
    /** Server-side apply: creates or updates the fields this client manages. */
    async apply<T extends KubeObject>(object: T): Promise<T> {
      const path = `${await objectPath(object)}?fieldManager=${FIELD_MANAGER}&force=true`;
      return (await call('PATCH', path, object, 'application/apply-patch+yaml')).body as T;
    },
    /** The object, or undefined when it does not exist. */
    async get<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | undefined> {
      const response = await send('GET', await objectPath({ apiVersion, kind, metadata: namespace === undefined ? { name } : { name, namespace } }));
      if (response.status === 404) return undefined;
      if (response.status !== 200)
        throw new KubeApiError(response.status, '', `GET ${kind} ${name}: ${response.status} ${JSON.stringify(response.body).slice(0, 500)}`);
      return response.body as T;
    },
    async list<T extends KubeObject>(apiVersion: string, kind: string, namespace?: string): Promise<T[]> {
      return ((await call('GET', await collection(apiVersion, kind, namespace))).body as { items: T[] }).items;
    },
    /**
     * Watches the kind in the namespace until an object satisfies `accept` (existing objects
     * count: a watch from no resourceVersion first lists them as ADDED), and returns it.
     */
    async waitFor<T extends KubeObject>(apiVersion: string, kind: string, namespace: string, accept: (object: T) => boolean, timeoutMs = 30_000): Promise<T> {
      const path = `${await collection(apiVersion, kind, namespace)}?watch=true&timeoutSeconds=${Math.ceil(timeoutMs / 1_000)}`;
      return new Promise<T>((resolve, reject) => {
        let seen = 'nothing';
        const req = request(new URL(path, options.url), { ca: options.caPem, headers: { authorization: `Bearer ${options.token}` } }, (res) => {
          if (res.statusCode !== 200) {
            req.destroy(new Error(`watch ${kind} in ${namespace}: ${res.statusCode}`));
            return;
          }
          let buffered = '';
          res.setEncoding('utf8').on('data', (chunk: string) => {
            buffered += chunk;
            if (buffered.length > MAX_BODY) req.destroy(new Error(`watch ${kind}: an event larger than ${MAX_BODY} bytes`));
            for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
              const event = JSON.parse(buffered.slice(0, newline)) as { type: string; object: T };
              buffered = buffered.slice(newline + 1);
              seen = `${event.type} ${event.object.metadata.name}`;
              if (event.type !== 'ERROR' && event.type !== 'BOOKMARK' && accept(event.object)) {
                clearTimeout(timer);
                resolve(event.object);
                req.destroy();
                return;
              }
            }
          });
          res.once('end', () => req.destroy(new Error(`watch ${kind} in ${namespace} ended; last seen: ${seen}`)));
        });
        const timer = setTimeout(() => req.destroy(new Error(`no ${kind} as awaited in ${namespace} within ${timeoutMs} ms; last seen: ${seen}`)), timeoutMs);
        req.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        req.end();
      });
    },
  };
}

/** Each `Warning: 299 - "text"` header's text (RFC 7234 warn-text, backslash-escaped). */
function warningsOf(rawHeaders: readonly string[]): string[] {
  const warnings: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() !== 'warning') continue;
    const text = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(rawHeaders[i + 1] ?? '')?.[1];
    if (text !== undefined) warnings.push(text.replace(/\\(.)/g, '$1'));
  }
  return warnings;
}
