// Plain HTTP/1.1 requests for tests: a fresh connection each, nothing pooled or retried.
import { request as httpRequest } from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** Date.now() when the response ended. */
  readonly at: number;
}

export interface HttpTarget {
  readonly host?: string;
  readonly port?: number;
  readonly socketPath?: string;
}

export function request(
  target: HttpTarget,
  path: string,
  options: { method?: string; signal?: AbortSignal; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.host ?? '127.0.0.1',
        ...(target.port === undefined ? {} : { port: target.port }),
        ...(target.socketPath === undefined ? {} : { socketPath: target.socketPath }),
        path,
        method: options.method ?? 'GET',
        agent: false,
        headers: options.headers ?? {},
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, at: Date.now() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
