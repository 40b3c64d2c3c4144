// Process entry of peer-pod.ts inside the sandbox: the run in, the figures out.
import { runJsonEntry } from '../../test/support/process-entry.js';
import { runPeerPod } from './peer-pod.js';

runJsonEntry(runPeerPod);
