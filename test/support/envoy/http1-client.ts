// A bare HTTP/1.1 client on one raw socket, for tests that must see exactly which connection a
// response came on, whether it said `Connection: close`, and when the server closed the socket.
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface AddressTarget {
  host?: string;
  port?: number;
  path?: string;
}

/** Parses '127.0.0.1:PORT', '[::1]:PORT' or 'unix:/path' (the admin address syntax). */
export function parseAddress(address: string): AddressTarget {
  if (address.startsWith('unix:')) {
    const path = address.slice('unix:'.length);
    return { path: path.startsWith('@') ? `\0${path.slice(1)}` : path };
  }
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (match?.[1] === undefined || match[2] === undefined) throw new Error(`bad address ${address}`);
  return { host: match[1], port: Number(match[2]) };
}

export class RawHttp1Client {
  readonly socket: net.Socket;
  /** Resolves when the server (or anything) closes the connection. */
  readonly closed: Promise<void>;
  private buffer = Buffer.alloc(0);
  private readonly waiting: Array<{ resolve: (response: RawResponse) => void; reject: (error: Error) => void }> = [];

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        for (const waiter of this.waiting.splice(0)) waiter.reject(new Error('connection closed before a response'));
        resolve();
      }),
    );
  }

  static connect(target: AddressTarget | number): Promise<RawHttp1Client> {
    const options = typeof target === 'number' ? { host: '127.0.0.1', port: target } : target;
    return new Promise((resolve, reject) => {
      const socket = net.connect(options as net.NetConnectOpts);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawHttp1Client(socket));
      });
    });
  }

  get isClosed(): boolean {
    return this.socket.destroyed;
  }

  request(method: string, target: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> {
    const body = options.body ?? '';
    const headers = { host: 'localhost', ...options.headers } as Record<string, string>;
    if (body !== '' || method === 'POST') headers['content-length'] = String(Buffer.byteLength(body));
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const response = new Promise<RawResponse>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.socket.write(`${method} ${target} HTTP/1.1\r\n${head}\r\n${body}`);
    return response;
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? '0');
      if (this.buffer.length < end + 4 + length) return;
      const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.waiting.shift()?.resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    }
  }
}

/** One admin request on a fresh connection, closed afterwards. */
export async function adminRequest(
  address: string,
  method: string,
  target: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const client = await RawHttp1Client.connect(parseAddress(address));
  try {
    return await client.request(method, target, options);
  } finally {
    client.close();
  }
}
