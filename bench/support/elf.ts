// Just enough of an ELF64 little-endian reader for the size scenario: section headers, the symbol
// table of an unstripped binary, and the notes postject adds (the SEA blob travels in one).
const SHT_SYMTAB = 2;
const SHT_NOBITS = 8;
const SHF_ALLOC = 2;

export interface Section {
  readonly name: string;
  readonly addr: number;
  readonly offset: number;
  readonly size: number;
  /** Bytes it takes in the file (none for .bss). */
  readonly fileSize: number;
  /** Mapped into memory when the program runs; otherwise only metadata in the file. */
  readonly loaded: boolean;
  readonly type: number;
  /** For a symbol table: the index of its string table. */
  readonly link: number;
}

export interface ElfSymbol {
  readonly name: string;
  readonly addr: number;
  readonly size: number;
}

const u64 = (buffer: Buffer, at: number): number => Number(buffer.readBigUInt64LE(at));

function cString(buffer: Buffer, at: number): string {
  const end = buffer.indexOf(0, at);
  return buffer.toString('latin1', at, end < 0 ? buffer.length : end);
}

export function sections(elf: Buffer): Section[] {
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) throw new Error('not a 64-bit little-endian ELF file');
  const shoff = u64(elf, 0x28);
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const headers = Array.from({ length: shnum }, (_, index) => {
    const at = shoff + index * shentsize;
    return {
      nameAt: elf.readUInt32LE(at),
      type: elf.readUInt32LE(at + 4),
      flags: u64(elf, at + 8),
      addr: u64(elf, at + 16),
      offset: u64(elf, at + 24),
      size: u64(elf, at + 32),
      link: elf.readUInt32LE(at + 40),
    };
  });
  const names = headers[elf.readUInt16LE(0x3e)];
  return headers.map((h) => ({
    name: names === undefined ? '' : cString(elf, names.offset + h.nameAt),
    addr: h.addr,
    offset: h.offset,
    size: h.size,
    fileSize: h.type === SHT_NOBITS ? 0 : h.size,
    loaded: (h.flags & SHF_ALLOC) !== 0,
    type: h.type,
    link: h.link,
  }));
}

/** Every symbol of the static symbol table (empty for a stripped binary). */
export function symbols(elf: Buffer): ElfSymbol[] {
  const all = sections(elf);
  const table = all.find((s) => s.type === SHT_SYMTAB);
  const strings = table === undefined ? undefined : all[table.link];
  if (table === undefined || strings === undefined) return [];
  const found: ElfSymbol[] = [];
  for (let at = table.offset; at < table.offset + table.size; at += 24) {
    found.push({ name: cString(elf, strings.offset + elf.readUInt32LE(at)), addr: u64(elf, at + 8), size: u64(elf, at + 16) });
  }
  return found;
}

/** The descriptor of the first note with this owner name (postject's NODE_SEA_BLOB), found by its header. */
export function noteDescriptor(elf: Buffer, owner: string): Buffer | undefined {
  const name = Buffer.from(`${owner}\0`, 'latin1');
  for (let at = elf.indexOf(name); at >= 12; at = elf.indexOf(name, at + 1)) {
    if (elf.readUInt32LE(at - 12) !== name.length) continue;
    const start = at + Math.ceil(name.length / 4) * 4;
    return elf.subarray(start, start + elf.readUInt32LE(at - 8));
  }
  return undefined;
}

/** Ranges of [start, end) that no sized symbol covers, largest first. */
export function unnamedRanges(section: Section, all: readonly ElfSymbol[]): Array<{ start: number; size: number }> {
  const end = section.addr + section.size;
  const inside = all.filter((s) => s.size > 0 && s.addr >= section.addr && s.addr < end).sort((a, b) => a.addr - b.addr);
  const gaps: Array<{ start: number; size: number }> = [];
  let covered = section.addr;
  for (const symbol of inside) {
    if (symbol.addr > covered) gaps.push({ start: covered, size: symbol.addr - covered });
    covered = Math.max(covered, symbol.addr + symbol.size);
  }
  if (end > covered) gaps.push({ start: covered, size: end - covered });
  return gaps.sort((a, b) => b.size - a.size);
}
