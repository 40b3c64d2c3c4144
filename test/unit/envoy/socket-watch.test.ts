import { describe, expect, it } from 'vitest';
import { fewerSockets, parseSocketCounts } from '../../../src/envoy/socket-watch.js';

// As Linux 6.x writes /proc/net/sockstat and sockstat6.
const sockstat = (inuse: number | string): string =>
  ['sockets: used 26', `TCP: inuse ${inuse} orphan 0 tw 245 alloc 8 mem 190`, 'UDP: inuse 0 mem 0', 'UDPLITE: inuse 0', 'RAW: inuse 0', 'FRAG: inuse 0 memory 0', ''].join('\n');
const sockstat6 = (inuse: number | string): string => [`TCP6: inuse ${inuse}`, 'UDP6: inuse 0', 'UDPLITE6: inuse 0', 'RAW6: inuse 0', 'FRAG6: inuse 0 memory 0', ''].join('\n');

describe('parseSocketCounts', () => {
  it("reads the namespace's TCP sockets in use, IPv4 and IPv6 apart", () => {
    expect(parseSocketCounts(sockstat(12), sockstat6(3))).toEqual({ tcp: 12, tcp6: 3 });
  });

  it('takes a kernel without IPv6 (no sockstat6) for no IPv6 sockets', () => {
    expect(parseSocketCounts(sockstat(2), undefined)).toEqual({ tcp: 2, tcp6: 0 });
  });

  it.each([
    ['no TCP line', 'sockets: used 26\nUDP: inuse 0 mem 0\n', sockstat6(0)],
    ['an empty file', '', sockstat6(0)],
    ['two TCP lines', `${sockstat(1)}${sockstat(2)}`, sockstat6(0)],
    ['a count that is not a whole number', sockstat('-1'), sockstat6(0)],
    ['a count too large to be one', sockstat('99999999999'), sockstat6(0)],
    ['the IPv4 file where IPv6 was expected', sockstat(1), sockstat(1)],
    ['the IPv6 file where IPv4 was expected', sockstat6(1), sockstat6(1)],
  ])('gives up on files that are not the kernel’s format (%s): no guess', (_name, four, six) => {
    expect(parseSocketCounts(four, six)).toBeUndefined();
  });
});

describe('fewerSockets', () => {
  it('sees a close, also when a socket of the other family opened meanwhile; an open alone is no close', () => {
    expect(fewerSockets({ tcp: 3, tcp6: 1 }, { tcp: 3, tcp6: 1 })).toBe(false);
    expect(fewerSockets({ tcp: 2, tcp6: 1 }, { tcp: 3, tcp6: 1 })).toBe(true);
    expect(fewerSockets({ tcp: 3, tcp6: 0 }, { tcp: 3, tcp6: 1 })).toBe(true);
    expect(fewerSockets({ tcp: 2, tcp6: 2 }, { tcp: 3, tcp6: 1 })).toBe(true);
    expect(fewerSockets({ tcp: 4, tcp6: 1 }, { tcp: 3, tcp6: 1 })).toBe(false);
  });
});
