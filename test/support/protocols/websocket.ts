// WebSocket (RFC 6455) as the protocol tests need it, both ends: the opening handshake over HTTP/1.1
// Upgrade, and text, close frames (a client masks its frames, a server does not). Node 20 has no
// WebSocket of its own without a flag; this is small enough to keep here instead of a dependency.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { type IncomingMessage, request } from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const TEXT = 0x1;
const CLOSE = 0x8;

function acceptKey(key: string): string {
  return createHash('sha1').update(`${key}${GUID}`).digest('base64');
}

function encodeFrame(opcode: number, payload: Buffer, masked: boolean): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x80 | opcode, length]) : Buffer.from([0x80 | opcode, 126, length >> 8, length & 0xff]);
  if (length >= 65_536) throw new Error('frames here stay under 64 KiB');
  if (!masked) return Buffer.concat([header, payload]);
  header[1] = (header[1] as number) | 0x80;
  const mask = randomBytes(4);
  return Buffer.concat([header, mask, Buffer.from(payload.map((byte, i) => byte ^ (mask[i % 4] as number)))]);
}

interface Frame {
  readonly opcode: number;
  readonly payload: Buffer;
}

/** Feeds bytes in, calls `onFrame` for each complete frame (masked or not). */
function frameReader(onFrame: (frame: Frame) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (buffered.length < 2) return;
      const opcode = (buffered[0] as number) & 0x0f;
      const masked = ((buffered[1] as number) & 0x80) !== 0;
      let length = (buffered[1] as number) & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) throw new Error('frames here stay under 64 KiB');
      const mask = masked ? buffered.subarray(offset, offset + 4) : undefined;
      if (masked) offset += 4;
      if (buffered.length < offset + length) return;
      const raw = buffered.subarray(offset, offset + length);
      const payload = Buffer.from(mask === undefined ? raw : raw.map((byte, i) => byte ^ (mask[i % 4] as number)));
      buffered = buffered.subarray(offset + length);
      onFrame({ opcode, payload });
    }
  };
}

/** The server's side of an Upgrade: answers 101 and echoes every text frame; a close frame is answered and ends the socket. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex): boolean {
  const key = req.headers['sec-websocket-key'];
  if (req.headers.upgrade?.toLowerCase() !== 'websocket' || typeof key !== 'string') {
    socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    return false;
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`);
  socket.on(
    'data',
    frameReader(({ opcode, payload }) => {
      if (opcode === TEXT) socket.write(encodeFrame(TEXT, payload, false));
      if (opcode === CLOSE) socket.end(encodeFrame(CLOSE, payload, false));
    }),
  );
  socket.on('error', () => socket.destroy());
  return true;
}

export interface WebSocketClient {
  readonly socket: Duplex;
  /** The 101's headers. */
  readonly headers: IncomingMessage['headers'];
  /** Sends a text message and resolves with the next text message received (the echo). */
  echo(text: string): Promise<string>;
  /** Resolves when the server's close frame has come back and the socket has ended. */
  close(): Promise<void>;
  /** Resolves when the socket closes, whoever closed it; `closeFrame` says whether a close frame came first. */
  readonly ended: Promise<{ closeFrame: boolean }>;
}

/** Opens a WebSocket through an HTTP/1.1 Upgrade to `port` on loopback. */
export async function openWebSocket(port: number, path = '/ws'): Promise<WebSocketClient> {
  const key = randomBytes(16).toString('base64');
  const req = request({
    host: '127.0.0.1',
    port,
    path,
    agent: false,
    headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
  });
  req.end();
  const upgraded = once(req, 'upgrade') as Promise<[IncomingMessage, Duplex, Buffer]>;
  const refused = once(req, 'response').then(([res]) => {
    throw new Error(`no upgrade: ${(res as IncomingMessage).statusCode}`);
  });
  const [res, socket, head] = await Promise.race([upgraded, refused]);
  if (res.headers['sec-websocket-accept'] !== acceptKey(key)) throw new Error('the 101 did not carry the accept key');
  const texts: string[] = [];
  const waiting: Array<(text: string) => void> = [];
  let closeFrame = false;
  const read = frameReader(({ opcode, payload }) => {
    if (opcode === CLOSE) closeFrame = true;
    if (opcode !== TEXT) return;
    const next = waiting.shift();
    if (next === undefined) texts.push(payload.toString());
    else next(payload.toString());
  });
  socket.on('data', read);
  socket.on('error', () => socket.destroy());
  if (head.length > 0) read(head);
  const ended = new Promise<{ closeFrame: boolean }>((resolve) => socket.once('close', () => resolve({ closeFrame })));
  return {
    socket,
    headers: res.headers,
    ended,
    echo(text) {
      const answer = new Promise<string>((resolve, reject) => {
        const queued = texts.shift();
        if (queued !== undefined) return resolve(queued);
        waiting.push(resolve);
        void ended.then(() => reject(new Error(`the WebSocket closed before the echo of ${text}`)));
      });
      socket.write(encodeFrame(TEXT, Buffer.from(text), true));
      return answer;
    },
    async close() {
      socket.write(encodeFrame(CLOSE, Buffer.from([0x03, 0xe8]), true));
      await ended;
    },
  };
}
