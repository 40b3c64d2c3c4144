// Per-test bookkeeping for stand-in tests: everything started through the harness is closed after
// each test, so a failing assertion never leaks sockets into the next one.
import net from 'node:net';
import { afterEach } from 'vitest';
import { RawH2Client } from './h2-client.js';
import { type AddressTarget, RawHttp1Client } from './http1-client.js';
import { EnvoyStandIn, type EnvoyStandInOptions } from './stand-in.js';

export interface StandInHarness {
  start(options?: EnvoyStandInOptions): Promise<EnvoyStandIn>;
  h1(target: AddressTarget | number): Promise<RawHttp1Client>;
  h2(port: number): Promise<RawH2Client>;
  tcp(port: number): Promise<net.Socket>;
  /** Runs after the test, before the stand-ins close. */
  defer(cleanup: () => void): void;
}

/** Call at the top of a test file; `defaults` are merged under each start()'s options. */
export function standInHarness(defaults: EnvoyStandInOptions = {}): StandInHarness {
  const standIns: EnvoyStandIn[] = [];
  const cleanups: Array<() => void> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    await Promise.all(standIns.splice(0).map((standIn) => standIn.close()));
  });

  return {
    async start(options = {}) {
      const standIn = await EnvoyStandIn.start({ ...defaults, ...options });
      standIns.push(standIn);
      return standIn;
    },
    async h1(target) {
      const client = await RawHttp1Client.connect(target);
      cleanups.push(() => client.close());
      return client;
    },
    async h2(port) {
      const client = await RawH2Client.connect(port);
      cleanups.push(() => client.close());
      return client;
    },
    tcp(port) {
      return new Promise((resolve, reject) => {
        const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(socket));
        socket.once('error', reject);
        cleanups.push(() => socket.destroy());
      });
    },
    defer(cleanup) {
      cleanups.push(cleanup);
    },
  };
}
