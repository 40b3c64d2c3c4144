// The command tree a peer's CLI exposes for its shutdown manager, and how this executable answers
// it: `<peer> [global flags] envoy shutdown-manager|shutdown [flags]` runs our manager or drain
// configured as the peer would be; the peer's other commands exit 2 with one line saying so.
import { errorMessage, UsageError } from '../shared/errors.js';
import { type FlagSpecs, type FlagValues, parseFlags } from './go-flags.js';

/** What an unprovided command exits with: the usage code of our own CLI. */
const NOT_PROVIDED_EXIT = 2;

type PeerCommandName = 'shutdown-manager' | 'shutdown';

interface PeerCommand {
  readonly summary: string;
  readonly flags: FlagSpecs;
  /** Runs with the parsed flags (command and global ones together) and returns the exit code. */
  run(values: FlagValues): Promise<number>;
}

export interface Peer {
  /** The executable name the peer's pods call: argv[0]'s basename. */
  readonly name: string;
  /** The project, for messages. */
  readonly project: string;
  /** Flags accepted before and after the command words (Contour's --log-format). */
  readonly globalFlags: FlagSpecs;
  readonly commands: Readonly<Record<PeerCommandName, PeerCommand>>;
  /** Top-level commands of the peer's CLI that this image does not provide. */
  readonly otherCommands: readonly string[];
  /** The peer's exit code for a bad command line (1 for both: cobra's and kingpin's). */
  readonly usageExit: number;
  /** The peer's exit code when no command is given (cobra prints help and exits 0; kingpin fails). */
  readonly noCommandExit: number;
}

/** Runs `args` (argv after the executable) the way `peer` would. Never throws. */
export async function runPeer(peer: Peer, args: readonly string[]): Promise<number> {
  try {
    const { leading, rest } = splitLeadingGlobals(args, peer.globalFlags);
    const [first, second] = rest;
    if (first === undefined || first === 'help' || first === '-h' || first === '--help') {
      process.stdout.write(usage(peer));
      return first === undefined ? peer.noCommandExit : 0;
    }
    if (peer.otherCommands.includes(first)) return notProvided(peer, first);
    if (first !== 'envoy') throw new UsageError(`unknown command ${JSON.stringify(first)} for "${peer.name}"`);
    if (second === undefined || second === '-h' || second === '--help') {
      process.stdout.write(usage(peer));
      return second === undefined ? peer.noCommandExit : 0;
    }
    if (second !== 'shutdown-manager' && second !== 'shutdown') {
      throw new UsageError(`unknown command ${JSON.stringify(second)} for "${peer.name} envoy"`);
    }
    const command = peer.commands[second];
    const parsed = parseFlags([...leading, ...rest.slice(2)], { ...peer.globalFlags, ...command.flags });
    if (parsed.help) {
      process.stdout.write(commandUsage(peer, second));
      return 0;
    }
    if (parsed.words.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.words[0])} for "${peer.name} envoy ${second}"`);
    return await command.run(parsed.values);
  } catch (error) {
    const message = error instanceof UsageError ? error.message : `unexpected failure: ${errorMessage(error)}`;
    process.stderr.write(`error: ${message}\n`);
    return peer.usageExit;
  }
}

function notProvided(peer: Peer, command: string): number {
  process.stderr.write(
    `error: "${peer.name} ${command}" is not available: this image is envoy-shutdown-manager and provides only ${peer.project}'s shutdown manager ("${peer.name} envoy shutdown-manager" and "${peer.name} envoy shutdown")\n`,
  );
  return NOT_PROVIDED_EXIT;
}

/** Global flags may come before the command words (kingpin allows it); everything else after them. */
function splitLeadingGlobals(args: readonly string[], globals: FlagSpecs): { leading: string[]; rest: string[] } {
  const leading: string[] = [];
  let i = 0;
  while (i < args.length) {
    const arg = args[i] as string;
    const name = arg.startsWith('--') ? (arg.slice(2).split('=', 1)[0] ?? '') : '';
    if (globals[name] === undefined) break;
    const takesNext = !arg.includes('=');
    leading.push(...args.slice(i, i + (takesNext ? 2 : 1)));
    i += takesNext ? 2 : 1;
  }
  return { leading, rest: args.slice(i) };
}

function usage(peer: Peer): string {
  const lines = (Object.keys(peer.commands) as PeerCommandName[]).map((name) => `  ${peer.name} envoy ${name.padEnd(17)} ${peer.commands[name].summary}`);
  return `envoy-shutdown-manager, answering as ${peer.project}'s ${peer.name}: only its shutdown manager is provided.\n\nUsage:\n${lines.join('\n')}\n\nRun "${peer.name} envoy <command> --help" for its flags.\n`;
}

function commandUsage(peer: Peer, name: PeerCommandName): string {
  const flags = Object.entries({ ...peer.commands[name].flags, ...peer.globalFlags }).map(
    ([flag, spec]) => `  --${flag} ${spec.kind} (default ${JSON.stringify(spec.fallback)})`,
  );
  return `Usage: ${peer.name} envoy ${name} [flags]\n\n${peer.commands[name].summary}\n\nFlags (as ${peer.project} spells them):\n${flags.join('\n')}\n`;
}
