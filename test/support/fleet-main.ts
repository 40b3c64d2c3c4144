// Process entry of the fleet tests (test/support/fleet/fleet-run.ts), run by runInPrivateNetns in a
// network namespace of its own: the scenario in, what every client and HAProxy counted out.
import { runFleet } from './fleet/fleet-run.js';
import { runJsonEntry } from './process-entry.js';

runJsonEntry(runFleet);
