import { describe, expect, it } from 'vitest';
import { parseSocketCounts, socketClosed } from '../../../src/envoy/socket-watch.js';

// As Linux 6.x writes /proc/net/sockstat and sockstat6.
const sockstat = (inuse: number | string, tw = 245): string =>
  [
    'sockets: used 26',
    `TCP: inuse ${inuse} orphan 0 tw ${tw} alloc 8 mem 190`,
    'UDP: inuse 0 mem 0',
    'UDPLITE: inuse 0',
    'RAW: inuse 0',
    'FRAG: inuse 0 memory 0',
    '',
  ].join('\n');
const sockstat6 = (inuse: number | string): string =>
  [`TCP6: inuse ${inuse}`, 'UDP6: inuse 0', 'UDPLITE6: inuse 0', 'RAW6: inuse 0', 'FRAG6: inuse 0 memory 0', ''].join('\n');

describe('parseSocketCounts', () => {
  it("reads the namespace's TCP sockets in use, IPv4 and IPv6 apart", () => {
    expect(parseSocketCounts(sockstat(12, 7), sockstat6(3))).toEqual({ tcp: 12, tcp6: 3, timeWait: 7 });
  });

  it('takes a kernel without IPv6 (no sockstat6) for no IPv6 sockets', () => {
    expect(parseSocketCounts(sockstat(2), undefined)).toEqual({ tcp: 2, tcp6: 0, timeWait: 245 });
  });

  it.each([
    ['no TCP line', 'sockets: used 26\nUDP: inuse 0 mem 0\n', sockstat6(0)],
    ['an empty file', '', sockstat6(0)],
    ['two TCP lines', `${sockstat(1)}${sockstat(2)}`, sockstat6(0)],
    ['a count that is not a whole number', sockstat('-1'), sockstat6(0)],
    ['a count too large to be one', sockstat('99999999999'), sockstat6(0)],
    ['no TIME_WAIT count', 'TCP: inuse 1 orphan 0 alloc 8 mem 190\n', sockstat6(0)],
    ['the IPv4 file where IPv6 was expected', sockstat(1), sockstat(1)],
    ['the IPv6 file where IPv4 was expected', sockstat6(1), sockstat6(1)],
  ])('gives up on files that are not the kernel’s format (%s): no guess', (_name, four, six) => {
    expect(parseSocketCounts(four, six)).toBeUndefined();
  });
});

describe('socketClosed', () => {
  const at = (tcp: number, tcp6: number, timeWait = 0) => ({ tcp, tcp6, timeWait });
  it('sees a close, also when a socket of the other family opened meanwhile; an open alone is no close', () => {
    expect(socketClosed(at(3, 1), at(3, 1))).toBe(false);
    expect(socketClosed(at(2, 1), at(3, 1))).toBe(true);
    expect(socketClosed(at(3, 0), at(3, 1))).toBe(true);
    expect(socketClosed(at(2, 2), at(3, 1))).toBe(true);
    expect(socketClosed(at(4, 1), at(3, 1))).toBe(false);
  });

  it('sees a close this side began even when a new connection took its place: one more in TIME_WAIT', () => {
    expect(socketClosed(at(3, 1, 11), at(3, 1, 10))).toBe(true);
    // TIME_WAIT sockets expire on their own: fewer is no close.
    expect(socketClosed(at(3, 1, 9), at(3, 1, 10))).toBe(false);
  });
});
