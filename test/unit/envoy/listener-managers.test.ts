import { describe, expect, it } from 'vitest';
import { NO_LISTENER_HTTP_STATS, pairingFromStats } from '../../../src/envoy/listener-managers.js';

const stat = (name: string) => ({ name, value: 0 });
const managersOf = (pairing: ReturnType<typeof pairingFromStats>) =>
  pairing.known ? Object.fromEntries([...pairing.topology.byStatName].map(([name, serves]) => [name, { managers: [...serves.connectionManagers].sort(), unreadable: serves.unreadable }])) : pairing.why;

describe('pairingFromStats', () => {
  it('pairs each listener with every connection manager Envoy names on it, dots in both names included', () => {
    const stats = [
      stat('listener.0.0.0.0_10443.http.https-10443.downstream_rq_completed'),
      stat('listener.second.http.a.http.b.downstream_rq_completed'),
      stat('listener.second.http.plain.downstream_rq_completed'),
      stat('listener.admin.http.admin.downstream_rq_completed'),
      stat('http.https-10443.downstream_cx_active'),
    ];
    expect(managersOf(pairingFromStats(stats, new Set(['0.0.0.0_10443', 'second', 'tcp'])))).toEqual({
      '0.0.0.0_10443': { managers: ['https-10443'], unreadable: undefined },
      second: { managers: ['a.http.b', 'plain'], unreadable: undefined },
      // No per-listener HTTP stat: it serves no HTTP, every connection is busy.
      tcp: { managers: [], unreadable: undefined },
    });
  });

  it('leaves both listeners unreadable when a name could be split at either', () => {
    const pairing = pairingFromStats([stat('listener.a.http.b.http.c.downstream_rq_completed')], new Set(['a', 'a.http.b']));
    expect(managersOf(pairing)).toMatchObject({ a: { unreadable: expect.stringMatching(/more than one listener/) as unknown }, 'a.http.b': { unreadable: expect.stringMatching(/more than one listener/) as unknown } });
  });

  it('is unknown when connection managers exist but no per-listener stat pairs them', () => {
    expect(pairingFromStats([stat('http.ingress.downstream_cx_active')], new Set(['l']))).toMatchObject({ known: false, why: NO_LISTENER_HTTP_STATS });
    // Only the admin API's manager: nothing to pair, every listener serves no HTTP.
    expect(pairingFromStats([stat('http.admin.downstream_cx_active')], new Set(['l']))).toMatchObject({ known: true });
  });

  it('gives the same key to the same pairing read again, whatever the order of the stats', () => {
    const a = [stat('listener.x.http.p.downstream_rq_completed'), stat('listener.y.http.q.downstream_rq_completed')];
    expect(pairingFromStats(a, new Set(['x', 'y'])).key).toBe(pairingFromStats([...a].reverse(), new Set(['y', 'x'])).key);
  });
});
