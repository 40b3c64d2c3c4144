// A TCP proxy listener's load (a TCPRoute's stream, TLS passthrough bytes with SNI), through to the
// backend's echo servers: short exchanges on new connections until the load balancer deprograms
// the pod, and one stream held open across the deletion, echoing a line every 100 ms, which the
// client ends HOLD_AFTER_DELETION_MS after time zero. A TCP proxy cannot tell an idle stream from a
// busy one, so no idle stream is kept: it would hold any drain to its end.
import { setTimeout as sleep } from 'node:timers/promises';
import { type StreamConnection, tcpStream, tlsStream } from '../protocols/clients.js';
import { runLoop } from '../traffic/request-loop.js';
import { Departure, HOLD_AFTER_DELETION_MS, type SideContext, type SideLoad, type SideReport, THINK_MS } from './side-load.js';

export interface StreamTarget {
  readonly name: string;
  readonly inPod: number;
  /** TLS passthrough with this SNI (the handshake is with the backend); raw TCP without. */
  readonly servername?: string;
  /** False: short exchanges only, nothing held across the deletion. */
  readonly hold?: boolean;
}

const ECHO_EVERY_MS = 100;

export function streamLoad(target: StreamTarget): (context: SideContext) => Promise<SideLoad> {
  return async (context) => {
    const port = context.port(target.inPod);
    const open = (): Promise<StreamConnection> => (target.servername === undefined ? tcpStream(port) : tlsStream(port, target.servername));
    const failures: string[] = [];
    const departure = new Departure();
    const exchange = async (stream: StreamConnection, line: string): Promise<void> => {
      await stream.echo(line);
      departure.answered();
    };

    let heldUntil: number | undefined;
    const held = target.hold === false ? undefined : await open();
    const holding =
      held === undefined
        ? Promise.resolve()
        : (async () => {
            await exchange(held, 'held 0\n');
            for (let n = 1; departure.zero === undefined || Date.now() < departure.zero + HOLD_AFTER_DELETION_MS; n += 1) {
              if (n > (HOLD_AFTER_DELETION_MS * 20) / ECHO_EVERY_MS) throw new Error('time zero never came');
              await exchange(held, `held ${n}\n`);
              await sleep(ECHO_EVERY_MS);
            }
            heldUntil = Date.now();
            await held.close();
            departure.lastAnswer = Date.now();
          })().catch((error: Error) => void failures.push(`${target.name} held stream: ${error.message}`));

    let first: () => void = () => undefined;
    const exchanged = new Promise<void>((resolve) => (first = resolve));
    const loop = runLoop(
      async (n) => {
        try {
          const stream = await open();
          await exchange(stream, `short ${n}\n`);
          await stream.close();
          first();
          return true;
        } catch (error) {
          failures.push(`${target.name} exchange: ${(error as Error).message}`);
          return false;
        }
      },
      { thinkTimeMs: THINK_MS, goOn: () => departure.goOn(false) },
    );
    return {
      name: target.name,
      slowRequests: 0,
      startLong: () => undefined,
      idle: [],
      ready: () => exchanged,
      terminationStarted: (zero, deprogrammedAt) => departure.start(zero, deprogrammedAt),
      async finish(): Promise<SideReport> {
        await Promise.all([loop, holding]);
        return {
          name: target.name,
          failures,
          servedAfterDeletion: departure.served,
          busyUntil: Math.max(departure.lastAnswer, heldUntil ?? 0),
          heldUntil,
          toldToLeaveAfterMs: undefined,
        };
      },
      close: async () => held?.close(),
    };
  };
}
