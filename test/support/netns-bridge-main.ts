// Run inside a pod's network namespace (nsenter -n): forwards each `from` to its `to` (see
// peer-pod/forward.ts), prints `ready` once every one listens, and runs until killed.
import { type End, forward } from './peer-pod/forward.js';

const plan = JSON.parse(process.argv[2] ?? '[]') as Array<{ from: End; to: End }>;
Promise.all(plan.map(({ from, to }) => forward(from, to))).then(
  () => process.stdout.write('ready\n'),
  (error: unknown) => {
    process.stderr.write(`bridge: ${String(error)}\n`);
    process.exit(1);
  },
);
