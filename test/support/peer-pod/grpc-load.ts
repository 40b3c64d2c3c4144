// gRPC to a GRPCRoute listener over h2c, as a gRPC channel behind a load balancer uses it: unary
// calls back to back on one HTTP/2 connection (a new one after a GOAWAY while the pod is still
// programmed), a streaming call open across the deletion that the backend feeds a reply every
// 100 ms until the client ends its side HOLD_AFTER_DELETION_MS after time zero, and an idle channel.
import { once } from 'node:events';
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { grpcMessage, grpcReader } from '../protocols/grpc.js';
import { GRPC_STREAM_PATH, GRPC_UNARY_PATH } from './protocol-backend.js';
import { Departure, HOLD_AFTER_DELETION_MS, type SideContext, type SideLoad, type SideReport, THINK_MS } from './side-load.js';

const CALL_TIMEOUT_MS = 10_000;

interface Channel {
  readonly session: ClientHttp2Session;
  goaway(): boolean;
}

async function channel(port: number): Promise<Channel> {
  const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { enablePush: false } });
  let goaway = false;
  session.on('goaway', () => (goaway = true));
  session.on('error', () => undefined);
  await once(session, 'connect');
  return { session, goaway: () => goaway || session.closed || session.destroyed };
}

/** Opens a call; `onReply` sees each reply; resolves with grpc-status, rejects on a reset or a close without trailers. */
function call(
  session: ClientHttp2Session,
  authority: string,
  path: string,
  onReply: (payload: string) => void,
): { stream: ClientHttp2Stream; status: Promise<string> } {
  const stream = session.request({ ':method': 'POST', ':path': path, ':authority': authority, 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('data', grpcReader(onReply));
  const status = new Promise<string>((resolve, reject) => {
    stream.on('trailers', (trailers) => resolve(String(trailers['grpc-status'])));
    stream.on('close', () => reject(new Error(`closed without trailers (RST code ${stream.rstCode})`)));
    stream.on('error', reject);
  });
  status.catch(() => undefined);
  return { stream, status };
}

async function unary(session: ClientHttp2Session, authority: string, n: number): Promise<void> {
  let reply = '';
  const { stream, status } = call(session, authority, GRPC_UNARY_PATH, (payload) => (reply = payload));
  stream.end(grpcMessage(String(n)));
  const timer = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), CALL_TIMEOUT_MS);
  try {
    const code = await status;
    if (code !== '0' || reply !== `hello ${n}`) throw new Error(`grpc-status ${code}, reply ${JSON.stringify(reply)}`);
  } finally {
    clearTimeout(timer);
  }
}

export function grpcLoad(target: { readonly name: string; readonly inPod: number; readonly authority: string }): (context: SideContext) => Promise<SideLoad> {
  return async (context) => {
    const port = context.port(target.inPod);
    const failures: string[] = [];
    const departure = new Departure();

    const idle = await channel(port);
    await unary(idle.session, target.authority, 0);
    const idleChannel = { closed: () => idle.session.closed || idle.session.destroyed, close: async () => void idle.session.destroy() };

    const watching = await channel(port);
    const replies: string[] = [];
    let replied: () => void = () => undefined;
    const firstReply = new Promise<void>((resolve) => (replied = resolve));
    const watch = call(watching.session, target.authority, GRPC_STREAM_PATH, (payload) => {
      replies.push(payload);
      departure.answered();
      replied();
    });
    watch.stream.write(grpcMessage('watch'));
    let heldUntil: number | undefined;
    let started: (zero: number) => void = () => undefined;
    const zeroCame = new Promise<number>((resolve) => (started = resolve));
    const holding = (async () => {
      await firstReply;
      const zero = await zeroCame;
      await sleep(Math.max(0, zero + HOLD_AFTER_DELETION_MS - Date.now()));
      const before = replies.length;
      heldUntil = Date.now();
      watch.stream.end();
      const code = await watch.status;
      departure.lastAnswer = Date.now();
      if (code !== '0') throw new Error(`grpc-status ${code}`);
      if (before === 0 || replies.some((reply, i) => reply !== `reply ${i + 1}`)) throw new Error(`replies out of order: ${replies.join(', ')}`);
    })().catch((error: Error) => void failures.push(`${target.name} streaming call: ${error.message}`));

    let first: () => void = () => undefined;
    const unaryOnce = new Promise<void>((resolve) => (first = resolve));
    const loop = (async () => {
      let current: Channel | undefined;
      for (let n = 1; departure.goOn(current !== undefined && !current.goaway()); n += 1) {
        try {
          if (current === undefined || current.goaway()) {
            if (current !== undefined) departure.told();
            current?.session.close();
            current = await channel(port);
          }
          await unary(current.session, target.authority, n);
          departure.answered();
          first();
        } catch (error) {
          failures.push(`${target.name} unary call: ${(error as Error).message}`);
          current = undefined;
        }
        if (current?.goaway() === true) departure.told();
        await sleep(THINK_MS);
      }
      current?.session.close();
    })();
    return {
      name: target.name,
      slowRequests: 0,
      startLong: () => undefined,
      idle: [idleChannel],
      ready: () => Promise.all([unaryOnce, firstReply]).then(() => undefined),
      terminationStarted(zero, deprogrammedAt) {
        departure.start(zero, deprogrammedAt);
        started(zero);
      },
      async finish(): Promise<SideReport> {
        await Promise.all([loop, holding]);
        watching.session.close();
        return {
          name: target.name,
          failures,
          servedAfterDeletion: departure.served,
          busyUntil: Math.max(departure.lastAnswer, heldUntil ?? 0),
          heldUntil,
          toldToLeaveAfterMs: departure.toldAfterMs(),
        };
      },
      async close() {
        watching.session.destroy();
        await idleChannel.close();
      },
    };
  };
}
