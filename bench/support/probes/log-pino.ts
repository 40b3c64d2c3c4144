// pino writing the same progress line to stdout.
import { pino } from 'pino';
import { stayIdle } from './keep-alive.js';

pino().child({ component: 'drain' }).info({ connections: 3, elapsedMs: 3000 }, 'draining');
stayIdle();
