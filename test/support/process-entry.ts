// What a process that runSandboxed (test/support/sandbox.ts) starts does: its input comes as JSON in
// argv[2], its result goes out as one JSON line on stdout, a failure's stack to stderr (exit 1).
export function runJsonEntry<Input, Output>(run: (input: Input) => Promise<Output>): void {
  run(JSON.parse(process.argv[2] ?? '{}') as Input).then(
    (output) => {
      process.stdout.write(`${JSON.stringify(output)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
