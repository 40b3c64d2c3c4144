// Just enough of a Dockerfile parser to assert on the image's structure: instructions (with their
// continuation lines joined), grouped into stages, with COPY's flags and sources split out.

export interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY… */
  readonly keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  readonly args: string;
  /** 1-based line where the instruction starts. */
  readonly line: number;
}

export interface Stage {
  readonly image: string;
  readonly name: string | undefined;
  readonly platform: string | undefined;
  /** Every instruction after FROM, up to the next FROM. */
  readonly instructions: readonly Instruction[];
}

export interface Copy {
  /** The --from stage or image; undefined for a copy from the build context. */
  readonly from: string | undefined;
  readonly sources: readonly string[];
  readonly destination: string;
}

function parseInstructions(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    // Comments inside a continued instruction are dropped by Docker too.
    if (line.startsWith('#') || (line === '' && pending === '')) return;
    if (pending === '') startLine = index + 1;
    const continued = line.endsWith('\\');
    pending += `${continued ? line.slice(0, -1) : line} `;
    if (continued) return;
    const [keyword = '', ...rest] = pending.trim().split(/\s+/);
    instructions.push({ keyword: keyword.toUpperCase(), args: rest.join(' '), line: startLine });
    pending = '';
  });
  return instructions;
}

export function parseStages(text: string): Stage[] {
  const stages: Array<{ image: string; name: string | undefined; platform: string | undefined; instructions: Instruction[] }> = [];
  for (const instruction of parseInstructions(text)) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args.split(' ');
      const platform = words.find((word) => word.startsWith('--platform='))?.slice('--platform='.length);
      const [image = '', as, name] = words.filter((word) => !word.startsWith('--'));
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, platform, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`line ${instruction.line}: ${instruction.keyword} before any FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

/** COPY's flags and paths (shell form only: the JSON form is not used here). */
export function parseCopy(instruction: Instruction): Copy {
  if (instruction.keyword !== 'COPY') throw new Error(`line ${instruction.line}: not a COPY`);
  const words = instruction.args.split(' ');
  const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((word) => !word.startsWith('--'));
  const destination = paths.pop();
  if (destination === undefined || paths.length === 0) throw new Error(`line ${instruction.line}: COPY needs a source and a destination`);
  return { from, sources: paths, destination };
}

/** The exec (JSON array) form of ENTRYPOINT/CMD, or undefined for the shell form. */
export function execForm(instruction: Instruction): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(instruction.args);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? (parsed as string[]) : undefined;
  } catch {
    return undefined;
  }
}
