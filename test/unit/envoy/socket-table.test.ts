import { describe, expect, it } from 'vitest';
import { summarizeSockets } from '../../../src/envoy/socket-table.js';

// Lines as Linux writes them; the tails after the state are cut short, which the parser ignores.
const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const TCP6_HEADER = '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const TAIL = ' 00000000:00000000 00:00000000 00000000     0        0 5040150 1 00000000eaf6dc55 100 0 0 10 0';
const v4 = (slot: number, local: string, remote: string, state: string): string => `  ${slot}: ${local} ${remote} ${state}${TAIL}`;
const LOOPBACK6 = '00000000000000000000000001000000';
const ANY6 = '00000000000000000000000000000000';

// Envoy listens on 10000 (0x2710) and its admin API on 19000 (0x4A38); 8443 (0x20FB) on IPv6.
const tcp = (...rows: string[]): string => [TCP_HEADER, ...rows, ''].join('\n');
const LISTENING = [v4(0, '00000000:2710', '00000000:0000', '0A'), v4(1, '0100007F:4A38', '00000000:0000', '0A')];
const clientA = v4(2, '0100007F:2710', '0100007F:C001', '01'); // Envoy's side of a downstream connection
const clientB = v4(3, '0100007F:2710', '0100007F:C002', '08'); // closed by the client, not yet by Envoy
const clientSideA = v4(4, '0100007F:C001', '0100007F:2710', '01'); // the client's own side: an ephemeral port
const adminRead = v4(5, '0100007F:4A38', '0100007F:C003', '01'); // the drain's admin connection, Envoy's side
const admin = new Set([19_000]);

describe('summarizeSockets', () => {
  it("counts the server side of connections on listening ports, ESTABLISHED or CLOSE_WAIT, never the admin port's", () => {
    const summary = summarizeSockets([tcp(...LISTENING, clientA, clientB, clientSideA, adminRead)], admin);
    expect(summary?.connections).toBe(2);
  });

  it('counts the admin port when told nothing of it', () => {
    expect(summarizeSockets([tcp(...LISTENING, adminRead)], new Set())?.connections).toBe(1);
  });

  it('leaves out sockets that are closing on Envoy’s side or waiting out TIME_WAIT', () => {
    const closing = ['04', '05', '06', '09', '0B'].map((state, i) => v4(10 + i, '0100007F:2710', `0100007F:D00${i}`, state));
    expect(summarizeSockets([tcp(...LISTENING, ...closing)], admin)).toEqual({ connections: 0, fingerprint: 0 });
  });

  it('reads tcp6 beside tcp, with its own header', () => {
    const tcp6 = [
      TCP6_HEADER,
      `   0: ${ANY6}:20FB ${ANY6}:0000 0A${TAIL}`,
      `   1: ${LOOPBACK6}:20FB ${LOOPBACK6}:C856 01${TAIL}`,
      `   2: ${LOOPBACK6}:C856 ${LOOPBACK6}:20FB 01${TAIL}`,
      '',
    ].join('\n');
    expect(summarizeSockets([tcp(...LISTENING, clientA), tcp6], admin)?.connections).toBe(2);
  });

  it('tells one set of connections from another of the same size, and the same set in any order', () => {
    const one = summarizeSockets([tcp(...LISTENING, clientA)], admin);
    const other = summarizeSockets([tcp(...LISTENING, v4(2, '0100007F:2710', '0100007F:C009', '01'))], admin);
    expect(one?.connections).toBe(other?.connections);
    expect(one?.fingerprint).not.toBe(other?.fingerprint);
    const both = summarizeSockets([tcp(...LISTENING, clientA, clientB)], admin);
    const reversed = summarizeSockets([tcp(clientB, ...LISTENING, clientA)], admin);
    expect(both).toEqual(reversed);
  });

  it('keeps the fingerprint when a connection only moves from ESTABLISHED to CLOSE_WAIT: Envoy still holds it', () => {
    const closeWait = v4(2, '0100007F:2710', '0100007F:C001', '08');
    expect(summarizeSockets([tcp(...LISTENING, closeWait)], admin)).toEqual(summarizeSockets([tcp(...LISTENING, clientA)], admin));
  });

  it('reads an empty table', () => {
    expect(summarizeSockets([tcp()], admin)).toEqual({ connections: 0, fingerprint: 0 });
  });

  it.each([
    ['no header', [clientA, ''].join('\n')],
    ['another file', 'Ip: Forwarding DefaultTTL\nIp: 1 64\n'],
    ['a line cut short', tcp(...LISTENING, '   2: 0100007F:2710 0100007F')],
    ['lowercase hex', tcp(v4(0, '0100007f:2710', '00000000:0000', '0A'))],
    ['an empty file', ''],
  ])('gives up on a table that is not the kernel’s format (%s): no guess', (_name, text) => {
    expect(summarizeSockets([text], admin)).toBeUndefined();
  });
});
