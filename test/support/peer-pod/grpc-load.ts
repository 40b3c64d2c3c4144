// gRPC to a GRPCRoute listener over h2c, as a gRPC channel behind a load balancer uses it: unary
// calls back to back on one HTTP/2 connection (a new one after a GOAWAY while the pod is still
// programmed), a streaming call open across the deletion that the backend feeds a reply every
// 100 ms until the client ends its side HOLD_AFTER_DELETION_MS after time zero, and an idle channel.
import http2 from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Http2Connection, http2Connection, REQUEST_TIMEOUT_MS } from '../protocols/clients.js';
import { GRPC_STREAM_PATH, GRPC_UNARY_PATH, grpcCall, grpcMessage } from '../protocols/grpc.js';
import { runLoop } from '../traffic/request-loop.js';
import { Departure, HOLD_AFTER_DELETION_MS, type SideContext, type SideLoad, type SideReport, THINK_MS } from './side-load.js';

/** The channel was told to leave (GOAWAY) or is gone. */
const leaving = (channel: Http2Connection): boolean => channel.goaways.length > 0 || channel.closed();

async function unary(channel: Http2Connection, authority: string, n: number): Promise<void> {
  let reply = '';
  const { stream, status } = grpcCall(channel.session, GRPC_UNARY_PATH, (payload) => (reply = payload), authority);
  stream.end(grpcMessage(String(n)));
  const timer = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), REQUEST_TIMEOUT_MS);
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

    const idleChannel = await http2Connection(port);
    await unary(idleChannel, target.authority, 0);

    const watching = await http2Connection(port);
    const replies: string[] = [];
    let replied: () => void = () => undefined;
    const firstReply = new Promise<void>((resolve) => (replied = resolve));
    const watch = grpcCall(
      watching.session,
      GRPC_STREAM_PATH,
      (payload) => {
        replies.push(payload);
        departure.answered();
        replied();
      },
      target.authority,
    );
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
    let current: Http2Connection | undefined;
    const loop = runLoop(
      async (n) => {
        try {
          if (current === undefined || leaving(current)) {
            if (current !== undefined) departure.told();
            current?.session.close();
            current = await http2Connection(port);
          }
          await unary(current, target.authority, n + 1);
          departure.answered();
          first();
          if (leaving(current)) departure.told();
          return true;
        } catch (error) {
          failures.push(`${target.name} unary call: ${(error as Error).message}`);
          current = undefined;
          return false;
        }
      },
      { thinkTimeMs: THINK_MS, goOn: () => departure.goOn(current !== undefined && !leaving(current)) },
    ).finally(() => current?.session.close());
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
