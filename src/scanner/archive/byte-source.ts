/**
 * Random access to the bytes of an archive without holding it whole: a file read through its descriptor,
 * bytes already in memory, or a window of another source (a jar stored uncompressed inside a Spring Boot
 * jar is read in place, never copied).
 */
import { closeSync, fstatSync, openSync, readSync, rmSync } from "node:fs";

export interface ByteSource {
  readonly size: number;
  /** `length` bytes from `offset` (fewer when the source ends first). */
  read(offset: number, length: number): Uint8Array;
  /** Releases the descriptor (and deletes a temporary file); the source is not read afterwards. */
  close(): void;
}

export function bufferSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: (offset, length) => bytes.subarray(offset, Math.min(bytes.length, offset + length)),
    close: () => {},
  };
}

/** A file read through one descriptor; `temporary` files are deleted when closed. */
export function fileSource(path: string, options: { temporary?: boolean } = {}): ByteSource {
  const fd = openSync(path, "r");
  let size: number;
  try {
    size = fstatSync(fd).size;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  let open = true;
  return {
    size,
    read(offset, length) {
      const wanted = Math.max(0, Math.min(length, size - offset));
      const buffer = Buffer.allocUnsafe(wanted);
      let done = 0;
      while (done < wanted) {
        const n = readSync(fd, buffer, done, wanted - done, offset + done);
        if (n === 0) break;
        done += n;
      }
      return done === wanted ? buffer : buffer.subarray(0, done);
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
      if (options.temporary) rmSync(path, { force: true });
    },
  };
}

/** `size` bytes of `parent` from `start`; closing it leaves the parent open. */
export function windowSource(parent: ByteSource, start: number, size: number): ByteSource {
  const end = Math.min(parent.size, start + size);
  return {
    size: end - start,
    read: (offset, length) =>
      parent.read(start + offset, Math.max(0, Math.min(length, end - start - offset))),
    close: () => {},
  };
}
