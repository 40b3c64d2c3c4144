// The setup most drain tests share: an Envoy stand-in with an `ingress` and a `stats` listener
// (drain strategy immediate, fast stats flush) and a fresh ready-file path.
import { join } from 'node:path';
import { tempDir } from './cli.js';
import { EnvoyStandIn } from './envoy/stand-in.js';

export async function standInAndReadyFile(defer: (cleanup: () => unknown) => void): Promise<{ envoy: EnvoyStandIn; ready: string }> {
  const envoy = await EnvoyStandIn.start({
    drainStrategy: 'immediate',
    statsFlushIntervalMs: 100,
    listeners: [
      { name: 'ingress', kind: 'http', drainType: 'MODIFY_ONLY' },
      { name: 'stats', kind: 'http', drainType: 'MODIFY_ONLY' },
    ],
  });
  const dir = tempDir();
  defer(() => envoy.close());
  defer(dir.cleanup);
  return { envoy, ready: join(dir.path, 'ready') };
}
