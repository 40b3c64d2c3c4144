// Our logger writing one progress line, as the drain does.
import { createLogger } from '../../../src/shared/log.js';
import { stayIdle } from './keep-alive.js';

createLogger({ level: 'info', format: 'json' }).child({ component: 'drain' }).info({ connections: 3, elapsedMs: 3000 }, 'draining');
stayIdle();
