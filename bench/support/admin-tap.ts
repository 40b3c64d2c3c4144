// A transparent TCP relay in front of Envoy's admin API that notes each request line as it passes
// (method, path, query, and when it arrived on the bench's clock). Envoy keeps no such record, and
// the benchmarks need to know when the tool read the count. Admin requests carry no body (the
// tool's POSTs are empty), so every "METHOD target HTTP/1.1" line starts a request.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface TappedCall {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  /** performance.now() when the request line arrived at the relay. */
  readonly receivedAt: number;
}

export class AdminTap {
  readonly calls: TappedCall[] = [];
  readonly #listeners = new Set<(call: TappedCall) => void>();
  readonly #sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(upstreamHost: string, upstreamPort: number): Promise<AdminTap> {
    let tap: AdminTap | undefined;
    const server = createServer((client) => tap?.relay(client, upstreamHost, upstreamPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0 }, resolve);
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the admin tap bound no port');
    tap = new AdminTap(server, address.port);
    return tap;
  }

  onCall(listener: (call: TappedCall) => void): void {
    this.#listeners.add(listener);
  }

  private relay(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('error', () => {});
      socket.once('close', () => this.#sockets.delete(socket));
    }
    let pending = '';
    client.on('data', (chunk: Buffer) => {
      const receivedAt = performance.now();
      pending += chunk.toString('latin1');
      for (let end = pending.indexOf('\r\n'); end >= 0; end = pending.indexOf('\r\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const match = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(line);
        if (match === null) continue;
        const [path = '', query = ''] = (match[2] as string).split(/\?(.*)/s);
        const call = { method: match[1] as string, path, query, receivedAt };
        this.calls.push(call);
        for (const listener of this.#listeners) listener(call);
      }
      if (pending.length > 8_192) pending = pending.slice(-8_192); // only request lines matter
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
