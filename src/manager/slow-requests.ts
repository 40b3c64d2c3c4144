// Node enforces its own request timeouts by scanning every connection on an interval that runs
// even with no connection open, which would wake an idle sidecar forever. This enforces the
// timeout per connection instead, with a timer armed only while a request is arriving.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a client that never reads its 408 may still hold the socket. */
const AFTER_408_MS = 1_000;

/**
 * A client must send each whole request within `timeoutMs` of connecting, or of its first byte on
 * a kept-alive connection; otherwise 408 and the connection is closed. Waiting for the answer is
 * not bounded by it. Per request only shared listeners are added: a crowd of waiters keeps no
 * closure each.
 */
export function cutSlowRequests(server: Server, timeoutMs: number): void {
  const arriving = new WeakMap<Socket, NodeJS.Timeout>();
  const cancel = (socket: Socket): void => {
    clearTimeout(arriving.get(socket));
    arriving.delete(socket);
  };
  function onSocketClose(this: Socket): void {
    cancel(this);
  }
  const expect = (socket: Socket): void => {
    const timer = setTimeout(() => {
      arriving.delete(socket);
      if (socket.writable) socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      setTimeout(() => socket.destroy(), AFTER_408_MS).unref();
    }, timeoutMs);
    arriving.set(socket, timer);
  };
  // A kept-alive connection: the next request's clock starts with its first byte.
  function onNextRequest(this: Socket): void {
    expect(this);
  }
  // The whole request is in once its body (usually none) has ended.
  function onRequestEnd(this: IncomingMessage): void {
    cancel(this.socket);
  }
  function onResponseFinish(this: ServerResponse): void {
    const { socket } = this.req;
    if (!socket.destroyed) socket.once('data', onNextRequest);
  }
  server.on('connection', (socket: Socket) => {
    expect(socket);
    socket.on('close', onSocketClose);
  });
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    request.on('end', onRequestEnd);
    response.on('finish', onResponseFinish);
  });
}
