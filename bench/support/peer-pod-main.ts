// Process entry of peer-pod.ts inside the sandbox: the run as JSON in argv[2], the figures out as
// one JSON line on stdout.
import { type PeerRun, runPeerPod } from './peer-pod.js';

runPeerPod(JSON.parse(process.argv[2] ?? '{}') as PeerRun).then(
  (figures) => {
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
