// The bridge's forwarder, from a Unix socket to a TCP port: a target that refuses the connection
// closes the client's Unix socket (which cannot be reset), and the forwarder goes on serving.
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../ports.js';
import { forward } from './forward.js';

/** Connects to the Unix socket, sends a line, and resolves with what came back before it closed. */
function exchange(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path }, () => socket.end('hello\n'));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.once('error', reject);
    socket.once('close', () => resolve(answer));
  });
}

describe('forward from a Unix socket to TCP', () => {
  it('closes the client when the target refuses, then forwards once the target listens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'esm-forward-'));
    const port = await freePort();
    const bridge = await forward({ path: join(dir, 'in.sock') }, { host: '127.0.0.1', port });
    try {
      expect(await exchange(join(dir, 'in.sock'))).toBe('');
      const echo = createServer({ allowHalfOpen: true }, (socket) => socket.pipe(socket));
      await new Promise<void>((resolve, reject) => echo.once('error', reject).listen({ host: '127.0.0.1', port }, resolve));
      expect((echo.address() as AddressInfo).port).toBe(port);
      expect(await exchange(join(dir, 'in.sock'))).toBe('hello\n');
      echo.close();
    } finally {
      bridge.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
