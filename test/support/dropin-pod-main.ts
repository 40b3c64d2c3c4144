// Process entry of test/dropin/pod.ts, run inside the sandbox: the scenario comes as JSON in
// argv[2], the observation goes out as one JSON line on stdout.
import { runPod, type PodScenario } from '../dropin/pod.js';

runPod(JSON.parse(process.argv[2] ?? '{}') as PodScenario).then(
  (observation) => {
    process.stdout.write(`${JSON.stringify(observation)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
