/**
 * Reads a .zip file's entries (stored or deflated, no zip64): enough for the packages serverless
 * writes, with no dependency and no `unzip` on the machine.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { inflateRawSync } from "node:zlib";

export interface ZipEntry {
  name: string;
  /** Bytes in the archive. */
  compressedSize: number;
  /** Bytes once extracted. */
  size: number;
  data(): Buffer;
}

export function readZip(path: string): ZipEntry[] {
  const buf = readFileSync(path);
  // The end-of-central-directory record: the last 22 bytes, or further back when there is a comment.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${path}: not a zip file`);
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`${path}: bad central directory`);
    const method = buf.readUInt16LE(at + 10);
    const compressedSize = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString("utf8", at + 46, at + 46 + nameLen);
    entries.push({
      name,
      compressedSize,
      size,
      data() {
        const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
        const raw = buf.subarray(start, start + compressedSize);
        if (method === 0) return Buffer.from(raw);
        if (method === 8) return inflateRawSync(raw);
        throw new Error(`${path}: ${name}: compression method ${method} not supported`);
      },
    });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Extracts a package into a directory, as Lambda does into /var/task. */
export function extractZip(path: string, dir: string): void {
  for (const e of readZip(path)) {
    if (e.name.endsWith("/")) continue;
    mkdirSync(dirname(join(dir, e.name)), { recursive: true });
    writeFileSync(join(dir, e.name), e.data());
  }
}
