// A frame-level HTTP/2 (prior knowledge) client. Node's own client closes itself on the first
// GOAWAY, which would hide what the server does next; this one records every frame and waits.
import net from 'node:net';
import { EventEmitter } from 'node:events';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME = { DATA: 0x0, HEADERS: 0x1, SETTINGS: 0x4, PING: 0x6, GOAWAY: 0x7 } as const;
const FLAG_END_STREAM = 0x1;
const FLAG_ACK = 0x1;
const FLAG_END_HEADERS = 0x4;

export interface Goaway {
  lastStreamId: number;
  errorCode: number;
  time: number;
}

export class RawH2Client extends EventEmitter {
  readonly goaways: Goaway[] = [];
  readonly closed: Promise<number>;
  private buffer = Buffer.alloc(0);
  private nextStreamId = 1;
  private readonly pending = new Map<number, () => void>();

  private constructor(readonly socket: net.Socket) {
    super();
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // Resolves with the time the connection closed.
    this.closed = new Promise((resolve) => socket.once('close', () => resolve(Date.now())));
    socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(0))]));
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawH2Client> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawH2Client(socket));
      });
    });
  }

  /** Sends GET <path>; resolves when the response stream ends. Returns the stream id too. */
  request(path: string): { streamId: number; done: Promise<void> } {
    const streamId = this.nextStreamId;
    this.nextStreamId += 2;
    const pathBytes = Buffer.from(path, 'latin1');
    const authority = Buffer.from('localhost', 'latin1');
    // HPACK: :method GET, :scheme http (static indexes 2 and 6), then :path and :authority as
    // literals without indexing on static names 4 and 1. Short values need no Huffman coding.
    const block = Buffer.concat([
      Buffer.from([0x82, 0x86, 0x04, pathBytes.length]),
      pathBytes,
      Buffer.from([0x01, authority.length]),
      authority,
    ]);
    const done = new Promise<void>((resolve) => this.pending.set(streamId, resolve));
    this.socket.write(frame(FRAME.HEADERS, FLAG_END_STREAM | FLAG_END_HEADERS, streamId, block));
    return { streamId, done };
  }

  /** Sends the client's own GOAWAY (NO_ERROR, no stream of the server's processed), as a client leaving politely does. */
  goaway(): void {
    const payload = Buffer.alloc(8); // last stream id 0, NO_ERROR
    this.socket.write(frame(FRAME.GOAWAY, 0, 0, payload));
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 9) {
      const length = this.buffer.readUIntBE(0, 3);
      if (this.buffer.length < 9 + length) return;
      const type = this.buffer.readUInt8(3);
      const flags = this.buffer.readUInt8(4);
      const streamId = this.buffer.readUInt32BE(5) & 0x7fffffff;
      const payload = this.buffer.subarray(9, 9 + length);
      this.buffer = this.buffer.subarray(9 + length);
      this.onFrame(type, flags, streamId, payload);
    }
  }

  private onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (type === FRAME.SETTINGS && (flags & FLAG_ACK) === 0) {
      this.socket.write(frame(FRAME.SETTINGS, FLAG_ACK, 0, Buffer.alloc(0)));
    } else if (type === FRAME.PING && (flags & FLAG_ACK) === 0) {
      this.socket.write(frame(FRAME.PING, FLAG_ACK, 0, payload));
    } else if (type === FRAME.GOAWAY) {
      const goaway = { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, errorCode: payload.readUInt32BE(4), time: Date.now() };
      this.goaways.push(goaway);
      this.emit('goaway', goaway);
    } else if ((type === FRAME.DATA || type === FRAME.HEADERS) && (flags & FLAG_END_STREAM) !== 0) {
      this.pending.get(streamId)?.();
      this.pending.delete(streamId);
    }
  }
}

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header.writeUInt8(type, 3);
  header.writeUInt8(flags, 4);
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}
