// What both drop-ins add to their peer's drain: an idle keep-alive connection (a client's pool, a
// metrics scraper) no longer holds Envoy to the drain timeout, or, under Contour, which has none,
// to the pod's grace period. Once the peer's minimum drain is over and no new connection or
// request arrived for the quiet period, only connections carrying a request count. Our own
// variables turn it off or change the quiet period: a peer's pod sets none of them.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import { UsageError } from '../shared/errors.js';
import { fromEnv } from '../shared/parsers.js';

const DROPIN_QUIET_PERIOD_MS = 2_000;

export interface IdlePolicy {
  readonly quietPeriod: number;
  readonly ignoreIdleConnections: boolean;
}

export function dropinIdlePolicy(env: NodeJS.ProcessEnv): IdlePolicy {
  const { ignoreIdleConnections: ignore, quietPeriod: quiet } = DRAIN_SETTINGS;
  const ignoreText = env[ignore.env];
  const quietText = env[quiet.env];
  const ignoreIdleConnections = ignoreText === undefined ? true : fromEnv(ignore.env, ignoreText, ignore.parse);
  const quietPeriod = quietText === undefined ? (ignoreIdleConnections ? DROPIN_QUIET_PERIOD_MS : 0) : fromEnv(quiet.env, quietText, quiet.parse);
  if (ignoreIdleConnections && quietPeriod === 0) {
    throw new UsageError(`${ignore.env} needs ${quiet.env} above 0: a connection is idle once no request arrived for that long`);
  }
  return { quietPeriod, ignoreIdleConnections };
}
