// Runs the large-configuration measurement outside the bench's results file:
// `node scripts/run-ts.mjs bench/support/large-config-main.ts [peer] [MxN ...]` (M listeners of N
// chains each; default the sizes of bench/large-config.ts), one JSON line per size on stdout.
import type { PeerName } from '../../test/support/peer-fixtures/fixtures.js';
import { SIZES } from '../large-config.js';
import { measureSize } from './large-config.js';
import { progress } from './scenario.js';

async function main(): Promise<void> {
  const [peerArg, ...sizeArgs] = process.argv.slice(2);
  const peer: PeerName = peerArg === 'contour' ? 'contour' : 'envoy-gateway';
  const sizes =
    sizeArgs.length === 0
      ? SIZES
      : sizeArgs.map((arg) => {
          const [listeners, chains] = arg.split('x').map(Number);
          return { listeners: listeners ?? 1, chainsPerListener: chains ?? 1 };
        });
  for (const size of sizes) {
    progress('large-config', `${peer} ${size.listeners} x ${size.chainsPerListener}`);
    console.log(JSON.stringify(await measureSize(peer, size)));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
