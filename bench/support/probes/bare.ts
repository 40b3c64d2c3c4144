// The floor: write one line and stay idle, loading nothing.
import { writeSync } from 'node:fs';
import { stayIdle } from './keep-alive.js';

writeSync(1, '{}\n');
stayIdle();
