// Real client connections to Envoy's data-plane listeners.
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 request through `agent` (false: a connection of its own); the status, the Connection header and the socket used. */
export function keepAliveRequest(port: number, agent: Agent | false, path = '/'): Promise<{ status: number; connection: string | undefined; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, socket: req.socket as Socket }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** An idle HTTP/1.1 keep-alive connection, opened by one served request. Close it to end it. */
export async function idleHttpConnection(port: number, path = '/'): Promise<{ socket: Socket; close(): Promise<void> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const { socket } = await keepAliveRequest(port, agent, path);
  return {
    socket,
    async close() {
      await closeSocket(socket);
      agent.destroy();
    },
  };
}

/** A raw TCP connection (to a tcp listener, which Envoy never drains). */
export async function tcpConnection(port: number): Promise<{ socket: Socket; close(): Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return { socket, close: () => closeSocket(socket) };
}

async function closeSocket(socket: Socket): Promise<void> {
  if (socket.destroyed) return;
  const closed = once(socket, 'close');
  socket.destroy();
  await closed;
}
