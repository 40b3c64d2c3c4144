// Just enough of ELF64 to learn what a dynamically linked executable needs at run time: its
// program interpreter (the dynamic loader) and its DT_NEEDED libraries. Reads only the headers
// and the dynamic section, never the whole (100 MB) file.
import { ElfError } from '../shared/errors.js';

export interface ElfDependencies {
  /** PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2; undefined for a static or loader-less object. */
  readonly interpreter: string | undefined;
  /** DT_NEEDED sonames, in order. */
  readonly needed: readonly string[];
  /** DT_RUNPATH, else DT_RPATH: colon-separated directories, $ORIGIN not yet expanded. */
  readonly runpath: string | undefined;
  readonly machine: number;
}

/** Reads `length` bytes at `offset`. */
export type ReadAt = (offset: number, length: number) => Promise<Buffer>;

export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;
const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NULL = 0n;
const DT_NEEDED = 1n;
const DT_STRTAB = 5n;
const DT_RPATH = 15n;
const DT_RUNPATH = 29n;

interface Segment {
  readonly type: number;
  readonly offset: number;
  readonly vaddr: number;
  readonly filesz: number;
}

export async function readElfDependencies(read: ReadAt): Promise<ElfDependencies> {
  const header = await read(0, 64);
  if (header.length < 64 || header.readUInt32BE(0) !== 0x7f454c46) throw new ElfError('not an ELF file');
  if (header[4] !== 2 || header[5] !== 1) throw new ElfError('not a 64-bit little-endian ELF file');
  const machine = header.readUInt16LE(18);
  const segments = await programHeaders(read, header);
  const interp = segments.find((s) => s.type === PT_INTERP);
  const interpreter = interp === undefined ? undefined : cString(await read(interp.offset, interp.filesz), 0);
  const dynamic = segments.find((s) => s.type === PT_DYNAMIC);
  if (dynamic === undefined) return { interpreter, needed: [], runpath: undefined, machine };

  const tags = dynamicTags(await read(dynamic.offset, dynamic.filesz));
  const { strtab } = tags;
  if (strtab === undefined) throw new ElfError('dynamic section without a string table');
  // DT_STRTAB is a virtual address: find the loaded segment that maps it to the file.
  const load = segments.find((s) => s.type === PT_LOAD && strtab >= s.vaddr && strtab < s.vaddr + s.filesz);
  if (load === undefined) throw new ElfError('string table outside every loaded segment');
  const base = strtab - load.vaddr + load.offset;
  const strings = await read(base, load.offset + load.filesz - base);
  const pathOffset = tags.runpath ?? tags.rpath;
  return {
    interpreter,
    needed: tags.needed.map((offset) => cString(strings, offset)),
    runpath: pathOffset === undefined ? undefined : cString(strings, pathOffset),
    machine,
  };
}

async function programHeaders(read: ReadAt, header: Buffer): Promise<Segment[]> {
  const phoff = Number(header.readBigUInt64LE(32));
  const phentsize = header.readUInt16LE(54);
  const phnum = header.readUInt16LE(56);
  const table = await read(phoff, phentsize * phnum);
  const segments: Segment[] = [];
  for (let i = 0; i < phnum; i += 1) {
    const at = i * phentsize;
    segments.push({
      type: table.readUInt32LE(at),
      offset: Number(table.readBigUInt64LE(at + 8)),
      vaddr: Number(table.readBigUInt64LE(at + 16)),
      filesz: Number(table.readBigUInt64LE(at + 32)),
    });
  }
  return segments;
}

/** The dynamic section's entries this reader needs: string-table offsets of DT_NEEDED, DT_RPATH, DT_RUNPATH, and DT_STRTAB's address. */
function dynamicTags(entries: Buffer): { readonly needed: number[]; readonly strtab?: number; readonly rpath?: number; readonly runpath?: number } {
  const needed: number[] = [];
  let strtab: number | undefined;
  let rpath: number | undefined;
  let runpath: number | undefined;
  for (let at = 0; at + 16 <= entries.length; at += 16) {
    const tag = entries.readBigInt64LE(at);
    const value = Number(entries.readBigUInt64LE(at + 8));
    if (tag === DT_NULL) break;
    if (tag === DT_NEEDED) needed.push(value);
    else if (tag === DT_STRTAB) strtab = value;
    else if (tag === DT_RPATH) rpath = value;
    else if (tag === DT_RUNPATH) runpath = value;
  }
  return { needed, ...(strtab === undefined ? {} : { strtab }), ...(rpath === undefined ? {} : { rpath }), ...(runpath === undefined ? {} : { runpath }) };
}

function cString(buffer: Buffer, start: number): string {
  const end = buffer.indexOf(0, start);
  return buffer.toString('utf8', start, end === -1 ? buffer.length : end);
}
