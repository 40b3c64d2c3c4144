// The admin endpoints the stand-in implements, routed like Envoy's admin: exact path match after
// slash merging, POST-only mutating handlers (405), and a 404 that lists the commands.
import { type AdminRequest, type AdminResponse, json, text } from './admin-request.js';
import type { ServerState } from './options.js';
import { parseStatsParams } from './stats-params.js';
import { renderPrometheus } from './stats-prometheus.js';
import { renderJson, renderText, selectStats } from './stats-render.js';
import type { StatsStore } from './stats-store.js';

export interface DrainListenersRequest {
  graceful: boolean;
  inboundOnly: boolean;
  skipExit: boolean;
}

/** What the handlers may see and do to the server. */
export interface AdminContext {
  stats: StatsStore;
  state(): ServerState;
  setHealthCheckFailed(failed: boolean): void;
  drainListeners(request: DrainListenersRequest): void;
  serverInfo(): string;
  listeners(): Array<{ name: string; host: string; port: number }>;
  /** Runs after a /stats response is sent: stats_flush_on_admin flushes then, too late for it. */
  afterStatsRequest(): void;
  /** Runs after the /quitquitquit response is sent. */
  quit(): void;
}

export interface AdminResult extends AdminResponse {
  afterSent?: () => void;
}

interface Route {
  path: string;
  help: string;
  mutating: boolean;
  handle(request: AdminRequest, ctx: AdminContext): AdminResult;
}

const OK = 'OK\n';

const ROUTES: readonly Route[] = [
  { path: '/', help: 'Admin home page', mutating: false, handle: () => ({ status: 200, body: homePage(), contentType: 'text/html; charset=UTF-8' }) },
  { path: '/drain_listeners', help: 'drain listeners (params: graceful, inboundonly, skip_exit)', mutating: true, handle: drainListeners },
  {
    path: '/healthcheck/fail',
    help: 'cause the server to fail health checks',
    mutating: true,
    handle: (_request, ctx) => {
      ctx.setHealthCheckFailed(true);
      return text(200, OK);
    },
  },
  {
    path: '/healthcheck/ok',
    help: 'cause the server to pass health checks',
    mutating: true,
    handle: (_request, ctx) => {
      ctx.setHealthCheckFailed(false);
      return text(200, OK);
    },
  },
  { path: '/help', help: 'print out list of admin commands', mutating: false, handle: () => text(200, `admin commands are:\n${helpList()}`) },
  { path: '/listeners', help: 'print listener info (params: format)', mutating: false, handle: listeners },
  { path: '/quitquitquit', help: 'exit the server', mutating: true, handle: (_request, ctx) => ({ ...text(200, OK), afterSent: () => ctx.quit() }) },
  {
    path: '/ready',
    help: 'print server state, return 200 if LIVE, otherwise return 503',
    mutating: false,
    handle: (_request, ctx) => text(ctx.state() === 'LIVE' ? 200 : 503, `${ctx.state()}\n`),
  },
  { path: '/server_info', help: 'print server version/status information', mutating: false, handle: (_request, ctx) => json(200, ctx.serverInfo()) },
  { path: '/stats', help: 'print server stats (params: usedonly, filter, format, type)', mutating: false, handle: (request, ctx) => stats(request, ctx, false) },
  { path: '/stats/prometheus', help: 'print server stats in prometheus format', mutating: false, handle: (request, ctx) => stats(request, ctx, true) },
];

export function routeAdminRequest(request: AdminRequest, ctx: AdminContext): AdminResult {
  const route = ROUTES.find((candidate) => candidate.path === request.path);
  if (route === undefined) return text(404, `invalid path. admin commands are:\n${helpList()}`);
  if (route.mutating && request.method !== 'POST') {
    return text(405, `Method ${request.method} not allowed, POST required.`);
  }
  return route.handle(request, ctx);
}

function helpList(): string {
  return ROUTES.map((route) => `  ${route.path}: ${route.help}\n`).join('');
}

function drainListeners(request: AdminRequest, ctx: AdminContext): AdminResult {
  const graceful = request.params.has('graceful');
  const skipExit = request.params.has('skip_exit');
  // Envoy 1.40 answers skip_exit without graceful with 200 OK, and its listeners stay open and serving.
  if (skipExit && !graceful) return text(200, OK);
  ctx.drainListeners({ graceful, skipExit, inboundOnly: request.params.has('inboundonly') });
  return text(200, OK);
}

function stats(request: AdminRequest, ctx: AdminContext, prometheusPath: boolean): AdminResult {
  const parsed = parseStatsParams(request.params, prometheusPath ? 'prometheus' : undefined);
  if (!parsed.ok) return text(400, parsed.body);
  const { params } = parsed;
  const selected = selectStats(ctx.stats.snapshot(), params);
  const afterSent = (): void => ctx.afterStatsRequest();
  switch (params.format) {
    case 'json':
      return { ...json(200, renderJson(selected)), afterSent };
    case 'prometheus':
      return { ...text(200, renderPrometheus(selected, params.textReadouts)), afterSent };
    case 'text':
      return { ...text(200, renderText(selected)), afterSent };
  }
}

function listeners(request: AdminRequest, ctx: AdminContext): AdminResult {
  const all = ctx.listeners();
  if (request.params.get('format') === 'json') {
    const statuses = all.map(({ name, host, port }) => ({
      name,
      local_address: { socket_address: { address: host, port_value: port } },
    }));
    return json(200, JSON.stringify({ listener_statuses: statuses }));
  }
  return text(200, all.map(({ name, host, port }) => `${name}::${host.includes(':') ? `[${host}]` : host}:${port}\n`).join(''));
}

function homePage(): string {
  const items = ROUTES.map((route) => `<li><a href="${route.path}">${route.path}</a>: ${route.help}</li>`).join('');
  return `<!DOCTYPE html><html><head><title>Envoy Admin</title></head><body><ul>${items}</ul></body></html>\n`;
}
