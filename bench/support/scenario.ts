// What every benchmark scenario provides to bench/run.ts.

export interface Scenario {
  /** Command-line name and section key: `release-latency`. */
  readonly name: string;
  /** Section heading in RESULTS.md. */
  readonly title: string;
  /** Runs every measurement and returns the section's Markdown body (tables and notes). */
  run(): Promise<string>;
}

/** Progress on stderr, so it never mixes with anything a caller parses. */
export function progress(scenario: string, message: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${scenario}: ${message}\n`);
}
