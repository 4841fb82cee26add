/**
 * Archives an attacker would hand the scanner, written without ever holding their inflated content: a
 * deflate stream of N MiB of zeros is one full-flushed block of 1 MiB of zeros repeated N times (each such
 * block stands alone), so a 1 GiB entry takes ~1 MiB on disk and no time to make.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { constants, crc32, deflateRawSync } from "node:zlib";

export interface BombEntry {
  name: string;
  /** Stored bytes (method 0), or MiB of zeros deflated (method 8). */
  content: Uint8Array | { zerosMiB: number };
}

const MiB = 1024 * 1024;
const ZERO_MIB = new Uint8Array(MiB);

/** Deflated 1 MiB of zeros, flushed so that the next copy needs nothing from it. */
const ZERO_BLOCK = deflateRawSync(ZERO_MIB, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
/** An empty final block. */
const FINAL_BLOCK = deflateRawSync(new Uint8Array(0));

function zerosCrc(mib: number): number {
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = crc32(ZERO_MIB, crc);
  return crc;
}

const u16 = (n: number) => Buffer.from([n & 0xff, (n >>> 8) & 0xff]);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};

/** Writes a zip archive (ZIP64 fields for sizes of 4 GiB and more are not needed here). */
export function writeZip(path: string, entries: BombEntry[], options: { prefix?: Uint8Array } = {}): void {
  const fd = openSync(path, "w");
  let offset = 0;
  const write = (b: Uint8Array) => {
    writeSync(fd, b);
    offset += b.length;
  };
  try {
    if (options.prefix) write(options.prefix);
    const zipStart = offset;
    const central: Buffer[] = [];
    for (const entry of entries) {
      const name = Buffer.from(entry.name, "utf8");
      const stored = entry.content instanceof Uint8Array;
      const size = stored
        ? (entry.content as Uint8Array).length
        : (entry.content as { zerosMiB: number }).zerosMiB * MiB;
      const compressedSize = stored
        ? size
        : (entry.content as { zerosMiB: number }).zerosMiB * ZERO_BLOCK.length + FINAL_BLOCK.length;
      const crc = stored
        ? crc32(entry.content as Uint8Array)
        : zerosCrc((entry.content as { zerosMiB: number }).zerosMiB);
      const method = stored ? 0 : 8;
      const localAt = offset - zipStart;
      const common = Buffer.concat([
        u16(20),
        u16(0x0800),
        u16(method),
        u16(0),
        u16(0x21),
        u32(crc),
        u32(compressedSize),
        u32(size),
        u16(name.length),
      ]);
      write(Buffer.concat([u32(0x04034b50), common, u16(0), name]));
      if (stored) write(entry.content as Uint8Array);
      else {
        for (let i = 0; i < (entry.content as { zerosMiB: number }).zerosMiB; i++) write(ZERO_BLOCK);
        write(FINAL_BLOCK);
      }
      central.push(
        Buffer.concat([
          u32(0x02014b50),
          u16(20),
          common,
          u16(0),
          u16(0),
          u16(0),
          u16(0),
          u32(0),
          u32(localAt),
          name,
        ]),
      );
    }
    const directory = Buffer.concat(central);
    const directoryAt = offset - zipStart;
    write(directory);
    const count = Math.min(entries.length, 0xffff);
    write(
      Buffer.concat([
        u32(0x06054b50),
        u16(0),
        u16(0),
        u16(count),
        u16(count),
        u32(directory.length),
        u32(directoryAt),
        u16(0),
      ]),
    );
  } finally {
    closeSync(fd);
  }
}
