// Clients beside the request loops: a long request in flight while the pod terminates, and
// pooled connections that sit idle (a client's pool, a metrics scraper). Each reports what it saw.
import { once } from 'node:events';
import { request } from 'node:http';
import http2 from 'node:http2';
import { idleHttpConnection } from '../clients.js';
import type { Protocol } from './failures.js';

export interface SideResult {
  readonly protocol: Protocol;
  readonly path: string;
  /** Undefined: a complete 2xx answer. */
  readonly failure: string | undefined;
}

/** One request on a fresh connection, answered or failed within `timeoutMs`. */
export function longRequest(port: number, protocol: Protocol, path: string, timeoutMs = 30_000): Promise<SideResult> {
  return protocol === 'http1' ? http1Request(port, path, timeoutMs) : http2Request(port, path, timeoutMs);
}

function http1Request(port: number, path: string, timeoutMs: number): Promise<SideResult> {
  return new Promise((resolve) => {
    const done = (failure: string | undefined): void => resolve({ protocol: 'http1', path, failure });
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => done(res.statusCode === 200 && body === 'ok\n' ? undefined : `status ${res.statusCode}, body ${JSON.stringify(body)}`));
      res.on('error', (error) => done(error.message));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (error) => done(error.message));
    req.end();
  });
}

function http2Request(port: number, path: string, timeoutMs: number): Promise<SideResult> {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    let settled = false;
    const done = (failure: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.close();
      resolve({ protocol: 'http2', path, failure });
    };
    const timer = setTimeout(() => {
      done(`no answer in ${timeoutMs} ms`);
      session.destroy();
    }, timeoutMs);
    session.on('error', (error) => done(error.message));
    const stream = session.request({ ':path': path });
    let status = 0;
    let body = '';
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => done(status === 200 && body === 'ok\n' ? undefined : `status ${status}, body ${JSON.stringify(body)}`));
    stream.on('error', (error) => done(error.message));
    stream.on('close', () => done(stream.rstCode === 0 ? undefined : `stream reset (code ${stream.rstCode})`));
  });
}

export interface IdleConnection {
  readonly protocol: Protocol;
  /** True once the server closed it. */
  closed(): boolean;
  close(): Promise<void>;
}

/** An HTTP/1.1 keep-alive connection left idle in its pool after one answered request. */
export async function idleHttp1(port: number, path = '/'): Promise<IdleConnection> {
  const { socket, close } = await idleHttpConnection(port, path);
  return { protocol: 'http1', closed: () => socket.destroyed, close };
}

/** An HTTP/2 session left idle after one answered request. */
export async function idleHttp2(port: number, path = '/'): Promise<IdleConnection> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  const first = await http2OnSession(session, path);
  if (first !== undefined) throw new Error(`the idle HTTP/2 session's first request failed: ${first}`);
  return {
    protocol: 'http2',
    closed: () => session.closed || session.destroyed,
    async close() {
      if (!session.destroyed) {
        const closed = once(session, 'close');
        session.destroy();
        await closed;
      }
    },
  };
}

function http2OnSession(session: http2.ClientHttp2Session, path: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const stream = session.request({ ':path': path });
    let status = 0;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.resume();
    stream.on('end', () => resolve(status === 200 ? undefined : `status ${status}`));
    stream.on('error', (error) => resolve(error.message));
  });
}
