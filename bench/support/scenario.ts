// What every benchmark scenario provides to bench/run.ts.

export interface Scenario {
  /** Command-line name and section key: `release-latency`. */
  readonly name: string;
  /** Section heading in RESULTS.md. */
  readonly title: string;
  /** Options it takes after the scenario names (`--series clusters`), for a quick run of part of it. */
  readonly options?: readonly string[];
  /** Runs every measurement (or those `options` leave) and returns the section's Markdown body (tables and notes). */
  run(options?: Readonly<Record<string, string>>): Promise<string>;
}

/** Progress on stderr, so it never mixes with anything a caller parses. */
export function progress(scenario: string, message: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${scenario}: ${message}\n`);
}
